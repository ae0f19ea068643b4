// The delivery queue of a database: one implementation per engine (delivery-queue.ts), chosen
// here only, so that the wiring and the tests never choose by engine themselves.

import { type Db, engineOf } from '../db/index.ts';
import type { DeliveryQueue } from './delivery-queue.ts';
import { PostgresDeliveryQueue } from './delivery-queue-postgres.ts';
import { SqliteDeliveryQueue } from './delivery-queue-sqlite.ts';

export function createDeliveryQueue(db: Db): DeliveryQueue {
  return engineOf(db) === 'postgres' ? new PostgresDeliveryQueue(db) : new SqliteDeliveryQueue(db);
}
