// Which process holds a lease. Replicas sharing PostgreSQL count the live leases the
// others hold against an endpoint's limit, and their own attempts from memory. Null on
// SQLite, whose one process owns every lease.

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function deliveryLeaseHolder(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('webhook_deliveries').addColumn('leased_by', t.text).execute();
    },
  };
}
