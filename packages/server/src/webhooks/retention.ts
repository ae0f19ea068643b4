// Delivery retention (--delivery-retention-days, 30 by default): attempts that started, and
// deliveries that were completed (succeeded or failed), longer ago than that are deleted.
// Signals stay: they are the tenant's record (GET /v1/signals), not webhook payloads; a
// delivery's body is built from its signal at each attempt and never stored.
//
// Both engines delete in small batches, each its own short transaction, found by primary key:
// delivery and attempt ids are time-ordered (UUIDv7 of the signal's receipt and of the
// attempt's start), so "older than the cutoff" is a range of the primary key and needs no
// index of its own. On PostgreSQL most rows go with their month: whole monthly partitions of
// both tables that fell out of the window are dropped (delivery-partitions-postgres.ts), and
// the batches only trim the month the cutoff falls in.
//
// Runs on the maintenance timer (--gc-interval), on one replica at a time (db exclusiveJob).

import { type Db, engineOf } from '../db/index.ts';
import { dropExpiredPartitions } from './delivery-partitions-postgres.ts';
import { uuidv7Floor } from './time-ordered-bounds.ts';

/** Rows per batch: a few milliseconds of work, so neither engine holds its locks for long. */
const BATCH_ROWS = 500;
/** Batches per run; the next run (every --gc-interval seconds) goes on where this one stopped. */
const MAX_BATCHES = 200;

export interface RetentionResult {
  attempts: number;
  deliveries: number;
  /** Partitions dropped (PostgreSQL), by name. */
  partitions: string[];
}

export async function pruneDeliveries(
  db: Db,
  now: Date,
  retentionMs: number,
  options: { batchRows?: number; maxBatches?: number } = {},
): Promise<RetentionResult> {
  const cutoff = new Date(now.getTime() - retentionMs);
  const cutoffIso = cutoff.toISOString();
  const cutoffId = uuidv7Floor(cutoff.getTime());
  const batch = options.batchRows ?? BATCH_ROWS;
  let budget = options.maxBatches ?? MAX_BATCHES;
  const partitions = engineOf(db) === 'postgres' ? await dropExpiredPartitions(db, cutoff) : [];
  let attempts = 0;
  // Attempts first: on PostgreSQL nothing cascades from a delivery to its attempts.
  while (budget-- > 0) {
    const r = await db
      .deleteFrom('webhook_attempts')
      .where('id', 'in', db.selectFrom('webhook_attempts').select('id').where('id', '<', cutoffId).limit(batch))
      .executeTakeFirst();
    const n = Number(r.numDeletedRows);
    attempts += n;
    if (n < batch) break;
    await yieldToRequests();
  }
  let deliveries = 0;
  while (budget-- > 0) {
    const r = await db
      .deleteFrom('webhook_deliveries')
      .where(
        'id',
        'in',
        db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('id', '<', cutoffId)
          .where('state', 'in', ['succeeded', 'failed'])
          .where('completed_at', '<', cutoffIso)
          .limit(batch),
      )
      .executeTakeFirst();
    const n = Number(r.numDeletedRows);
    deliveries += n;
    if (n < batch) break;
    await yieldToRequests();
  }
  return { attempts, deliveries, partitions };
}

/** SQLite runs on the event loop's thread: requests get their turn between batches. */
const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));
