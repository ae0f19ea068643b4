// Delivery retention on this run's engine (SQLite, or PostgreSQL in the second pass): what
// goes (attempts started, and deliveries completed, before the cutoff), what stays (pending
// and in-flight deliveries whatever their age, recent rows, signals), in batches; and on
// PostgreSQL, whole months dropped as partitions, one maintenance job at a time.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import { testEndpoint, testSignal } from '../../test/signals.ts';
import { ON_POSTGRES, openTestDatabase, type TestDatabase } from '../../test/test-database.ts';
import { type Db, exclusiveJob, type SignalTable } from '../db/index.ts';
import { timeOrderedId } from '../kernel/ids.ts';
import { dropExpiredPartitions, ensurePartitions } from './delivery-partitions-postgres.ts';
import type { DeliveryQueue } from './delivery-queue.ts';
import { PostgresDeliveryQueue } from './delivery-queue-postgres.ts';
import { SqliteDeliveryQueue } from './delivery-queue-sqlite.ts';
import { pruneDeliveries } from './retention.ts';

const DAY = 86_400_000;
const NOW = new Date('2026-11-21T12:00:00.000Z');
const ago = (days: number) => new Date(NOW.getTime() - days * DAY);

const signal = (receivedAt: Date, tenantId = 't1'): SignalTable => testSignal(tenantId, receivedAt);

describe('delivery retention', () => {
  let test: TestDatabase;
  let db: Db;
  let queue: DeliveryQueue;

  beforeEach(async () => {
    test = await openTestDatabase('retention');
    db = test.db;
    queue = ON_POSTGRES ? new PostgresDeliveryQueue(db) : new SqliteDeliveryQueue(db);
    await tenantWithEndpoint('t1', null);
  });
  afterEach(() => test.close());

  /** A tenant (with its own retention, or null for the default) and its endpoint e<n>. */
  async function tenantWithEndpoint(id: string, retentionDays: number | null) {
    await db
      .insertInto('tenants')
      .values({ id, name: id, created_at: NOW.toISOString(), delivery_retention_days: retentionDays })
      .execute();
    await db
      .insertInto('webhook_endpoints')
      .values(testEndpoint(id.replace('t', 'e'), id, 1, NOW))
      .execute();
  }

  /** A delivery of a signal received at `receivedAt`, with one attempt at that time, in `state`. */
  async function delivery(
    receivedAt: Date,
    state: 'succeeded' | 'failed' | 'pending' | 'delivering',
    completedAt?: Date,
    tenantId = 't1',
  ) {
    const s = signal(receivedAt, tenantId);
    const [r] = await queue.enqueue([{ signal: s }]);
    assert.ok(r.ok);
    const id = r.deliveryIds[0];
    await db
      .updateTable('webhook_deliveries')
      .set({
        state,
        completed_at: state === 'succeeded' || state === 'failed' ? (completedAt ?? receivedAt).toISOString() : null,
        lease_until: state === 'delivering' ? NOW.toISOString() : null,
      })
      .where('id', '=', id)
      .execute();
    await db
      .insertInto('webhook_attempts')
      .values({
        id: timeOrderedId('x', receivedAt.getTime()).replace(/^x_(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'),
        delivery_id: id,
        tenant_id: tenantId,
        attempt: 1,
        started_at: receivedAt.toISOString(),
        duration_ms: 5,
        status: 200,
        error: null,
        response_excerpt: 'ok',
      })
      .execute();
    return { id, signalId: s.id };
  }

  const ids = async (table: 'webhook_deliveries' | 'webhook_attempts', column: 'id' | 'delivery_id') =>
    (await db.selectFrom(table).select(column).execute()).map((r) => (r as Record<string, string>)[column]).sort();

  it('deletes attempts started and deliveries completed before the cutoff, in batches; keeps the rest and every signal', async () => {
    const old = [];
    for (let i = 0; i < 5; i++) old.push(await delivery(ago(40 + i), i % 2 ? 'failed' : 'succeeded'));
    const recent = await delivery(ago(3), 'succeeded');
    const oldPending = await delivery(ago(45), 'pending');
    const oldInFlight = await delivery(ago(45), 'delivering');
    const redelivered = await delivery(ago(50), 'succeeded', ago(2)); // completed within the window
    const r = await pruneDeliveries(db, NOW, 30 * DAY, { batchRows: 2 });
    assert.equal(r.deliveries, 5);
    assert.equal(r.attempts, 8, 'every attempt that started before the cutoff, whatever its delivery');
    assert.deepEqual(
      await ids('webhook_deliveries', 'id'),
      [recent.id, oldPending.id, oldInFlight.id, redelivered.id].sort(),
    );
    assert.deepEqual(await ids('webhook_attempts', 'delivery_id'), [recent.id]);
    const signals = await db.selectFrom('signals').select('id').execute();
    assert.equal(signals.length, 9, 'signals are the tenant’s record: kept');
    const again = await pruneDeliveries(db, NOW, 30 * DAY);
    assert.deepEqual([again.attempts, again.deliveries], [0, 0]);
  });

  it('stops after maxBatches and goes on at the next run', async () => {
    for (let i = 0; i < 6; i++) await delivery(ago(40), 'succeeded');
    const first = await pruneDeliveries(db, NOW, 30 * DAY, { batchRows: 2, maxBatches: 4 });
    assert.equal(first.attempts, 6);
    assert.ok(first.deliveries < 6, `took ${first.deliveries}`);
    const second = await pruneDeliveries(db, NOW, 30 * DAY, { batchRows: 2 });
    assert.equal(first.deliveries + second.deliveries, 6);
  });

  describe('per tenant (default 30 days, at most 90)', () => {
    const POLICY = { defaultDays: 30, maxDays: 90 };
    const AGES = [5, 10, 40, 70, 100];
    /** Per tenant, the ages (days) of its deliveries still stored, and of its attempts. */
    async function kept() {
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select(['tenant_id', 'created_at', 'id'])
        .orderBy('created_at', 'desc')
        .execute();
      const attempts = new Set(await ids('webhook_attempts', 'delivery_id'));
      const out: Record<string, { deliveries: number[]; attempts: number[] }> = {};
      for (const r of rows) {
        const age = Math.round((NOW.getTime() - Date.parse(r.created_at)) / DAY);
        out[r.tenant_id] ??= { deliveries: [], attempts: [] };
        out[r.tenant_id].deliveries.push(age);
        if (attempts.has(r.id)) out[r.tenant_id].attempts.push(age);
      }
      return out;
    }

    beforeEach(async () => {
      await tenantWithEndpoint('t2', 7);
      await tenantWithEndpoint('t3', 60);
      await tenantWithEndpoint('t4', 200); // above the maximum: 90 applies
      if (ON_POSTGRES) await ensurePartitions(db, ago(100)); // August, September, October
      for (const t of ['t1', 't2', 't3', 't4'])
        for (const age of AGES) await delivery(ago(age), 'succeeded', undefined, t);
    });

    it('deletes each tenant’s rows past its own retention, and only those', async () => {
      const r = await pruneDeliveries(db, NOW, POLICY, { batchRows: 2 });
      assert.deepEqual(await kept(), {
        t1: { deliveries: [5, 10], attempts: [5, 10] },
        t2: { deliveries: [5], attempts: [5] },
        t3: { deliveries: [5, 10, 40], attempts: [5, 10, 40] },
        t4: { deliveries: [5, 10, 40, 70], attempts: [5, 10, 40, 70] },
      });
      if (!ON_POSTGRES) assert.deepEqual([r.attempts, r.deliveries], [10, 10]);
      const again = await pruneDeliveries(db, NOW, POLICY);
      assert.deepEqual([again.attempts, again.deliveries, again.partitions], [0, 0, []]);
      assert.equal((await db.selectFrom('signals').select('id').execute()).length, 20, 'signals stay');
    });

    it('charges its budget only for batches that deleted rows: many endpoints with nothing to delete use up no run', async () => {
      // Twenty more endpoints of t1 (sorted first), none with a delivery: 40 empty looks, free.
      const endpoint = await db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', 'e1')
        .executeTakeFirstOrThrow();
      await db
        .insertInto('webhook_endpoints')
        .values(Array.from({ length: 20 }, (_, i) => ({ ...endpoint, id: `e1_${String(i).padStart(2, '0')}` })))
        .execute();
      // Pass 1 (past 90 days) and three tenants with a shorter retention: 2 batches each.
      await pruneDeliveries(db, NOW, POLICY, { batchRows: 100, maxBatches: 8 });
      assert.deepEqual(await kept(), {
        t1: { deliveries: [5, 10], attempts: [5, 10] },
        t2: { deliveries: [5], attempts: [5] },
        t3: { deliveries: [5, 10, 40], attempts: [5, 10, 40] },
        t4: { deliveries: [5, 10, 40, 70], attempts: [5, 10, 40, 70] },
      });
    });

    it('keeps pending deliveries and deliveries completed within the tenant’s window, whatever their age', async () => {
      const pending = await delivery(ago(20), 'pending', undefined, 't2');
      const redelivered = await delivery(ago(20), 'succeeded', ago(1), 't2');
      await pruneDeliveries(db, NOW, POLICY);
      const left = await ids('webhook_deliveries', 'id');
      assert.ok(left.includes(pending.id) && left.includes(redelivered.id));
      assert.ok(!(await ids('webhook_attempts', 'delivery_id')).includes(pending.id), 'its old attempt goes');
    });

    if (ON_POSTGRES)
      it('PostgreSQL: drops a month only when no tenant needs it any more', async () => {
        const first = await pruneDeliveries(db, NOW, POLICY);
        assert.deepEqual(first.partitions, [], 't4 keeps 90 days: August is still needed');
        await db.updateTable('tenants').set({ delivery_retention_days: null }).where('id', '=', 't4').execute();
        const second = await pruneDeliveries(db, NOW, POLICY);
        assert.deepEqual(second.partitions.sort(), ['webhook_attempts_p2026_08', 'webhook_deliveries_p2026_08']);
        assert.equal((await kept()).t3.deliveries.join(), '5,10,40', 't3 keeps 60 days: September stays');
      });
  });

  if (ON_POSTGRES) {
    it('PostgreSQL: drops a month that lies wholly before the cutoff as partitions; keeps a month with work in it', async () => {
      const july = new Date('2026-07-10T00:00:00.000Z');
      const august = new Date('2026-08-10T00:00:00.000Z');
      await ensurePartitions(db, july); // July, August, September
      const gone = await delivery(july, 'succeeded');
      const stays = await delivery(august, 'pending');
      const partition = async (name: string) =>
        (await sql<{ found: boolean }>`select to_regclass(${name}) is not null as found`.execute(db)).rows[0].found;
      const inJuly = await sql<{ n: number }>`select count(*) as n from webhook_deliveries_p2026_07`.execute(db);
      assert.equal(inJuly.rows[0].n, 1, 'the row is in its month’s partition');
      const r = await pruneDeliveries(db, NOW, 30 * DAY);
      assert.deepEqual(r.partitions.sort(), [
        'webhook_attempts_p2026_07',
        'webhook_attempts_p2026_08',
        'webhook_attempts_p2026_09',
        'webhook_deliveries_p2026_07',
        'webhook_deliveries_p2026_09',
      ]);
      assert.equal(await partition('webhook_deliveries_p2026_07'), false);
      assert.equal(await partition('webhook_deliveries_p2026_08'), true, 'August has a pending delivery');
      assert.deepEqual(await ids('webhook_deliveries', 'id'), [stays.id]);
      assert.ok(!(await ids('webhook_deliveries', 'id')).includes(gone.id));
      // Once August's delivery is done, its month goes too.
      await db
        .updateTable('webhook_deliveries')
        .set({ state: 'failed', completed_at: august.toISOString() })
        .where('id', '=', stays.id)
        .execute();
      assert.deepEqual(await dropExpiredPartitions(db, ago(30)), ['webhook_deliveries_p2026_08']);
      // The current month and the next two are made ahead; making them again is a no-op.
      const made = await ensurePartitions(db, NOW);
      assert.equal(made.length, 6);
      assert.deepEqual(await ensurePartitions(db, NOW), []);
      const fresh = await delivery(NOW, 'pending');
      const inNovember = await sql<{ id: string }>`select id from webhook_deliveries_p2026_11`.execute(db);
      assert.deepEqual(
        inNovember.rows.map((x) => x.id),
        [fresh.id],
      );
    });

    it('PostgreSQL: a maintenance job runs on one replica at a time (advisory lock, never waited for)', async () => {
      const other = await test.openAnother();
      let release = () => {};
      const held = exclusiveJob(
        db,
        'retention-test',
        () =>
          new Promise<string>((r) => {
            release = () => r('first');
          }),
      );
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(await exclusiveJob(other, 'retention-test', async () => 'second'), { ran: false });
      assert.deepEqual(await exclusiveJob(other, 'another-job', async () => 'third'), { ran: true, result: 'third' });
      release();
      assert.deepEqual(await held, { ran: true, result: 'first' });
      assert.deepEqual(await exclusiveJob(other, 'retention-test', async () => 'again'), {
        ran: true,
        result: 'again',
      });
    });
  }
});
