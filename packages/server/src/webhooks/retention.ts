// Delivery retention, per tenant (issue 14, item 6): a tenant's attempts that started, and
// its deliveries that were completed (succeeded or failed), longer ago than its retention
// are deleted. A tenant's retention is its own choice (tenant settings) or the server's
// default (--delivery-retention-days, 30), never more than the server's maximum
// (--delivery-retention-max-days, 90): effectiveRetentionDays.
// Signals stay: they are the tenant's record (GET /v1/signals), erased on request only
// (signals' DELETE …/payload); a delivery's body is built from its signal at each attempt and
// never stored, so the delivery log is what retention removes: attempts with their response
// excerpts, errors and signatures, and completed deliveries.
//
// Two passes, each in small batches, each batch its own short transaction:
// 1. everything older than the LONGEST retention of any tenant, whatever its tenant, found by
//    primary key: delivery and attempt ids are time-ordered (UUIDv7 of the signal's receipt
//    and of the attempt's start), so "older than the cutoff" is a range of the primary key.
//    On PostgreSQL most of it goes with its month: whole monthly partitions that no tenant
//    needs any more are dropped (delivery-partitions-postgres.ts).
// 2. for each tenant whose retention is shorter, its rows between the two cutoffs, found
//    endpoint by endpoint through the (endpoint_id, created_at) index (an attempt starts after
//    its delivery was created, so the deliveries created before the cutoff hold every attempt
//    to delete); rows other tenants keep longer are never scanned.
//
// Runs on the maintenance timer (--gc-interval), on one replica at a time (db exclusiveJob).

import { type Db, engineOf } from '../db/index.ts';
import { dropExpiredPartitions } from './delivery-partitions-postgres.ts';
import { uuidv7Floor } from './time-ordered-bounds.ts';

const DAY_MS = 86_400_000;
/** Rows per batch: a few milliseconds of work, so neither engine holds its locks for long. */
const BATCH_ROWS = 500;
/** Batches per run; the next run (every --gc-interval seconds) goes on where this one stopped. */
const MAX_BATCHES = 200;

/** The server's retention settings, in days. */
export interface RetentionPolicy {
  defaultDays: number;
  maxDays: number;
}

export interface RetentionResult {
  attempts: number;
  deliveries: number;
  /** Partitions dropped (PostgreSQL), by name. */
  partitions: string[];
}

/** Days a tenant's delivery log is kept: its own choice (null: the default), at most the maximum. */
export function effectiveRetentionDays(chosen: number | null | undefined, policy: RetentionPolicy): number {
  return Math.min(chosen ?? policy.defaultDays, policy.maxDays);
}

/**
 * Deletes what is past each tenant's retention (`policy`; a number of milliseconds: every
 * tenant keeps its log that long).
 */
export async function pruneDeliveries(
  db: Db,
  now: Date,
  policy: RetentionPolicy | number,
  options: { batchRows?: number; maxBatches?: number } = {},
): Promise<RetentionResult> {
  const batch = options.batchRows ?? BATCH_ROWS;
  const budget = { batches: options.maxBatches ?? MAX_BATCHES };
  const tenants = await db.selectFrom('tenants').select(['id', 'delivery_retention_days']).orderBy('id').execute();
  const retentionMs = (chosen: number | null | undefined) =>
    typeof policy === 'number' ? policy : effectiveRetentionDays(chosen, policy) * DAY_MS;
  const byTenant = tenants.map((t) => ({ id: t.id, ms: retentionMs(t.delivery_retention_days) }));
  const longestMs = Math.max(retentionMs(null), ...byTenant.map((t) => t.ms));
  const cutoff = new Date(now.getTime() - longestMs);
  const partitions = engineOf(db) === 'postgres' ? await dropExpiredPartitions(db, cutoff) : [];
  const result = { partitions, ...(await pruneBefore(db, cutoff, batch, budget)) };
  for (const t of byTenant) {
    if (t.ms >= longestMs || budget.batches <= 0) continue;
    const r = await pruneTenantBefore(db, t.id, new Date(now.getTime() - t.ms), batch, budget);
    result.attempts += r.attempts;
    result.deliveries += r.deliveries;
  }
  return result;
}

/** Pass 1: every tenant's rows before `cutoff`, by primary key range. */
async function pruneBefore(db: Db, cutoff: Date, batch: number, budget: { batches: number }) {
  const cutoffIso = cutoff.toISOString();
  const cutoffId = uuidv7Floor(cutoff.getTime());
  // Attempts first: on PostgreSQL nothing cascades from a delivery to its attempts.
  const attempts = await deleteInBatches(
    () =>
      db
        .deleteFrom('webhook_attempts')
        .where('id', 'in', db.selectFrom('webhook_attempts').select('id').where('id', '<', cutoffId).limit(batch))
        .executeTakeFirst(),
    batch,
    budget,
  );
  const deliveries = await deleteInBatches(
    () =>
      db
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
        .executeTakeFirst(),
    batch,
    budget,
  );
  return { attempts, deliveries };
}

/** Pass 2: one tenant's rows before its own `cutoff`, endpoint by endpoint. */
async function pruneTenantBefore(db: Db, tenantId: string, cutoff: Date, batch: number, budget: { batches: number }) {
  const cutoffIso = cutoff.toISOString();
  const cutoffId = uuidv7Floor(cutoff.getTime());
  const endpoints = await db.selectFrom('webhook_endpoints').select('id').where('tenant_id', '=', tenantId).execute();
  let attempts = 0;
  let deliveries = 0;
  for (const { id: endpointId } of endpoints) {
    const old = () =>
      db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('endpoint_id', '=', endpointId)
        .where('created_at', '<', cutoffIso);
    attempts += await deleteInBatches(
      () =>
        db
          .deleteFrom('webhook_attempts')
          .where(
            'id',
            'in',
            db
              .selectFrom('webhook_attempts')
              .select('id')
              .where('delivery_id', 'in', old())
              .where('id', '<', cutoffId)
              .limit(batch),
          )
          .executeTakeFirst(),
      batch,
      budget,
    );
    deliveries += await deleteInBatches(
      () =>
        db
          .deleteFrom('webhook_deliveries')
          .where(
            'id',
            'in',
            old().where('state', 'in', ['succeeded', 'failed']).where('completed_at', '<', cutoffIso).limit(batch),
          )
          .executeTakeFirst(),
      batch,
      budget,
    );
    if (budget.batches <= 0) break;
  }
  return { attempts, deliveries };
}

/**
 * Runs `deleteBatch` (one DELETE of at most `batch` rows, returning how many) until it deletes
 * fewer than a batch or the budget of batches runs out, letting requests in between; returns
 * the rows deleted. Only a batch that deleted something costs budget: looking at an endpoint
 * with nothing to delete is an index probe, and charging it would let a tenant with many
 * endpoints use up a run before the tenants after it were looked at.
 */
async function deleteInBatches(
  deleteBatch: () => Promise<{ numDeletedRows: bigint }>,
  batch: number,
  budget: { batches: number },
): Promise<number> {
  let total = 0;
  while (budget.batches > 0) {
    const n = Number((await deleteBatch()).numDeletedRows);
    if (n === 0) break;
    budget.batches--;
    total += n;
    if (n < batch) break;
    await yieldToRequests();
  }
  return total;
}

/** SQLite runs on the event loop's thread: requests get their turn between batches. */
const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));
