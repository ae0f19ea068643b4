// The delivery queue's contract, run against each engine's implementation: the outbox, the
// claim with its lease, the release of leases, and the recording of outcomes that a policy
// decided. The policy here is a stand-in, so these tests see only what the queue writes;
// outcome-policy.test.ts tests the decisions. The engine is this run's (`npm test` runs the
// suite once on SQLite and once on PostgreSQL: test/test-database.ts); tests of what only a
// database shared by replicas must do (claims of two processes at once, NOTIFY) run on
// PostgreSQL only.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type pg from 'pg';
import { testAgent, testEndpoint, testSignal } from '../../test/signals.ts';
import { openTestDatabase, TEST_ENGINE, type TestDatabase } from '../../test/test-database.ts';
import { type Db, pgHotPool, pgPool, type SignalTable, withStatements } from '../db/index.ts';
import { timeOrderedId } from '../kernel/ids.ts';
import { ensurePartitions } from './delivery-partitions-postgres.ts';
import type { ClaimedDelivery, DeliveryQueue, OutcomePolicy } from './delivery-queue.ts';
import { createDeliveryQueue } from './delivery-queue-engine.ts';
import { SQL_ENQUEUE, SQL_LOCK_DUE_ENDPOINTS, SQL_WRITE_OUTCOMES } from './delivery-queue-postgres.ts';
import { SQL_DUE_ENDPOINTS } from './delivery-queue-sqlite.ts';
import type { AttemptOutcome, EndpointHealth, OutcomeDecision } from './outcome-policy.ts';

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

interface Engine {
  name: string;
  /** Several processes claim from it at once. */
  shared: boolean;
  queueOf(db: Db): DeliveryQueue;
}

const ENGINES: Engine[] = [
  TEST_ENGINE === 'postgres'
    ? { name: 'PostgreSQL', shared: true, queueOf: createDeliveryQueue }
    : { name: 'SQLite', shared: false, queueOf: createDeliveryQueue },
];

const T0 = new Date('2026-11-21T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const LEASE_MS = 60_000;

const signal = (tenant: string, receivedAt = T0): SignalTable => testSignal(tenant, receivedAt, timeOrderedId('sig'));

const endpoint = (id: string, tenant: string, enabled: number) => testEndpoint(id, tenant, enabled, T0);

/** A failed attempt, retried at `retryAt`; the stand-in for the policy's decisions. */
function retry(o: AttemptOutcome, retryAt: Date): OutcomeDecision {
  return {
    outcome: 'retrying',
    delivery: {
      kind: 'retry',
      attempts: o.attempt,
      lastStatus: 500,
      lastError: 'HTTP 500',
      nextAttemptAt: retryAt.toISOString(),
    },
    attempt: {
      attempt: o.attempt,
      startedAt: o.startedAt.toISOString(),
      durationMs: o.durationMs,
      status: 500,
      error: 'HTTP 500',
      responseExcerpt: 'oops',
    },
    failingSince: undefined,
    failureStreak: undefined,
    alert: undefined,
    disable: undefined,
  };
}

for (const engine of ENGINES) {
  describe(`DeliveryQueue on ${engine.name}`, () => {
    let test: TestDatabase;
    let db: Db;
    let queue: DeliveryQueue;

    beforeEach(async () => {
      test = await openTestDatabase('queue');
      db = test.db;
      queue = engine.queueOf(db);
      await db
        .insertInto('tenants')
        .values([
          { id: 't1', name: 'one', created_at: T0.toISOString() },
          { id: 't2', name: 'two', created_at: T0.toISOString() },
        ])
        .execute();
      await db
        .insertInto('webhook_endpoints')
        .values([endpoint('e1', 't1', 1), endpoint('e2', 't1', 1), endpoint('e3', 't1', 0), endpoint('e4', 't2', 1)])
        .execute();
    });
    afterEach(() => test.close());

    const enqueue = async (s: SignalTable, onlyEndpointId?: string) => {
      const [r] = await queue.enqueue([{ signal: s, onlyEndpointId }]);
      assert.ok(r.ok);
      return r.deliveryIds;
    };
    const deliveries = () =>
      db.selectFrom('webhook_deliveries').selectAll().orderBy('endpoint_id').orderBy('created_at').execute();
    const claim = (now: Date, limit = 100, perEndpoint = 16, busy = new Map<string, number>()) =>
      queue.claim({ now, leaseMs: LEASE_MS, limit, perEndpoint, busy });
    const byEndpoint = (claimed: { delivery: { endpoint_id: string } }[]) =>
      claimed.map((c) => c.delivery.endpoint_id).sort();
    const outcomeOf = (d: AttemptOutcome['delivery'], attempt = 1): AttemptOutcome => ({
      delivery: d,
      attempt,
      startedAt: T0,
      durationMs: 7,
      result: { kind: 'response', status: 500, retryAfter: undefined, excerpt: 'oops' },
    });

    describe('enqueue', () => {
      it('writes each signal with one pending delivery, due at once, per enabled endpoint of its tenant', async () => {
        const a = signal('t1');
        const b = signal('t2');
        const results = await queue.enqueue([
          { signal: a },
          { signal: b },
          { signal: signal('t1'), onlyEndpointId: 'e4' },
        ]);
        assert.deepEqual(
          results.map((r) => r.ok && r.deliveryIds.length),
          [2, 1, 0],
          'an endpoint of another tenant gets nothing, even when named',
        );
        const rows = await deliveries();
        assert.deepEqual(
          rows.map((r) => [r.signal_id, r.endpoint_id, r.state, r.attempts, r.next_attempt_at, r.lease_until]),
          [
            [a.id, 'e1', 'pending', 0, a.received_at, null],
            [a.id, 'e2', 'pending', 0, a.received_at, null],
            [b.id, 'e4', 'pending', 0, b.received_at, null],
          ],
        );
        // Each delivery id: a UUIDv7 of its signal's receipt (partitions and retention go by id), one per row.
        const ids = results.flatMap((r) => (r.ok ? r.deliveryIds : []));
        assert.deepEqual([...ids].sort(), rows.map((r) => r.id).sort());
        for (const id of ids) {
          assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
          assert.equal(Number.parseInt(id.replace('-', '').slice(0, 12), 16), T0.getTime());
        }
      });

      it('refuses an entry that fails alone, and keeps the others of the same call', async () => {
        const a = signal('t1');
        const results = await queue.enqueue([
          { signal: a },
          { signal: { ...signal('t1'), id: a.id } },
          { signal: signal('t2') },
        ]);
        assert.deepEqual(
          results.map((r) => r.ok),
          [true, false, true],
        );
        assert.equal((await deliveries()).length, 3);
      });

      describe("an agent's idempotency key", () => {
        const keyed = (key: string, agentId = 'a1') => ({ ...signal('t1'), agent_id: agentId, idempotency_key: key });
        beforeEach(async () => {
          await db
            .insertInto('agents')
            .values([testAgent('a1', 't1', T0), testAgent('a2', 't1', T0)])
            .execute();
        });
        const signalCount = async () => (await db.selectFrom('signals').select('id').execute()).length;

        it('a key the agent used already writes nothing and answers the first signal with its delivery count', async () => {
          const first = keyed('k1');
          const [r1] = await queue.enqueue([{ signal: first }]);
          assert.ok(r1.ok && r1.existing === undefined && r1.deliveryIds.length === 2);
          const [r2] = await queue.enqueue([{ signal: keyed('k1') }]);
          assert.deepEqual(r2, { ok: true, deliveryIds: [], existing: { signalId: first.id, deliveries: 2 } });
          assert.equal(await signalCount(), 1);
          assert.equal((await deliveries()).length, 2);
        });

        it('the same key twice in one batch: the first is written, the second answers it; others are unharmed', async () => {
          const first = keyed('k2');
          const plain = signal('t1');
          const results = await queue.enqueue([
            { signal: first },
            { signal: keyed('k2') },
            { signal: plain },
            { signal: keyed('k2', 'a2') },
          ]);
          assert.deepEqual(
            results.map((r) => (r.ok ? [r.deliveryIds.length, r.existing?.signalId ?? null] : 'failed')),
            [
              [2, null],
              [0, first.id],
              [2, null],
              [2, null],
            ],
            'another agent may use the same key',
          );
          assert.equal(await signalCount(), 3);
        });

        it('two batches with one key at once (two transactions) write one signal', async () => {
          const [a, b] = await Promise.all([
            queue.enqueue([{ signal: keyed('k3') }]),
            queue.enqueue([{ signal: keyed('k3') }]),
          ]);
          const answers = [a[0], b[0]];
          assert.ok(answers.every((r) => r.ok));
          const created = answers.filter((r) => r.ok && r.existing === undefined);
          assert.equal(created.length, 1);
          assert.equal(await signalCount(), 1);
          const existing = answers.find((r) => r.ok && r.existing !== undefined);
          assert.ok(existing?.ok);
          assert.equal(existing.existing?.deliveries, 2);
        });
      });
    });

    describe('claim', () => {
      it('leases due deliveries, oldest first, with their signal and endpoint row; not-yet-due ones stay', async () => {
        const early = signal('t1', at(-2000));
        const later = signal('t1', at(-1000));
        const future = signal('t1', at(5000));
        await enqueue(later, 'e1');
        await enqueue(early, 'e1');
        await enqueue(future, 'e1');
        const claimed = await claim(T0);
        assert.deepEqual(
          claimed.map((c) => c.signal?.id),
          [early.id, later.id],
        );
        for (const c of claimed) {
          assert.equal(c.delivery.state, 'delivering');
          assert.equal(c.delivery.lease_until, at(LEASE_MS).toISOString());
          assert.equal(c.endpoint?.id, 'e1');
          assert.equal(c.endpoint?.secret_sealed, 'sealed-e1', 'the secret comes sealed');
          assert.equal(c.endpoint?.url, 'https://e1.example/hook');
        }
        assert.equal(claimed[0].endpoint, claimed[1].endpoint, 'one endpoint is read once per claim');
        assert.deepEqual(await claim(T0), [], 'a leased delivery is not claimed again while its lease runs');
        assert.deepEqual(
          (await claim(at(5000))).map((c) => c.signal?.id),
          [future.id],
        );
      });

      it('takes at most `limit` in all and `perEndpoint` per endpoint', async () => {
        for (let i = 0; i < 5; i++) await enqueue(signal('t1', at(-i)));
        assert.equal((await claim(T0, 3)).length, 3);
        await queue.releaseAllLeases();
        assert.deepEqual(byEndpoint(await claim(T0, 100, 2)), ['e1', 'e1', 'e2', 'e2']);
      });

      it('counts the attempts this process has in flight against `perEndpoint`', async () => {
        for (let i = 0; i < 5; i++) await enqueue(signal('t1', at(-i)));
        assert.deepEqual(
          byEndpoint(await claim(T0, 100, 2, new Map([['e1', 1]]))),
          ['e1', 'e2', 'e2'],
          'e1 has one in flight already',
        );
        await queue.releaseAllLeases();
        assert.deepEqual(byEndpoint(await claim(T0, 100, 2, new Map([['e1', 2]]))), ['e2', 'e2']);
      });

      if (engine.shared)
        it('also counts the live leases other replicas hold (from the table); not its own, whose attempts it counts itself', async () => {
          for (let i = 0; i < 5; i++) await enqueue(signal('t1', at(-i)));
          const other = engine.queueOf(await test.openAnother());
          const claimOther = (limit: number) =>
            other.claim({ now: T0, leaseMs: LEASE_MS, limit, perEndpoint: 1, busy: new Map() });
          const held = await claimOther(1);
          assert.equal(held.length, 1, 'another replica holds one lease');
          const heldBy = held[0].delivery.endpoint_id;
          const mine = await claim(T0, 100, 2);
          assert.equal(mine.filter((c) => c.delivery.endpoint_id === heldBy).length, 1, 'the other’s lease counts');
          assert.equal(mine.length, 3);
          // Its own leases in the table do not count (its busy map, empty here, says what is in
          // flight): each endpoint takes what is left up to 4, less the other's lease.
          assert.deepEqual(byEndpoint(await claim(T0, 100, 4)), ['e1', 'e1', 'e1', 'e2', 'e2', 'e2']);
          // Expired leases are no longer busy, whoever held them: every delivery is claimable again.
          assert.equal((await claim(at(LEASE_MS + 1), 100, 5)).length, 10);
        });

      it('serves endpoints round-robin: one endpoint’s older backlog does not fill a claim others wait in', async () => {
        for (let i = 0; i < 10; i++) await enqueue(signal('t1', at(-10_000 + i)), 'e1');
        await enqueue(signal('t1', at(-1)), 'e2');
        const claimed = await claim(T0, 3, 16);
        assert.deepEqual(
          claimed.map((c) => c.delivery.endpoint_id),
          ['e1', 'e2', 'e1'],
          'each endpoint’s oldest first, then the second oldest',
        );
        for (const c of claimed) assert.equal(c.endpoint?.id, c.delivery.endpoint_id, 'every row has its own endpoint');
        assert.equal(claimed[0].endpoint, claimed[2].endpoint, 'rows of one endpoint share its object');
      });

      it('looks only at the endpoints with work, however many are configured', async () => {
        await db
          .insertInto('webhook_endpoints')
          .values(Array.from({ length: 200 }, (_, i) => endpoint(`idle${String(i).padStart(3, '0')}`, 't2', 1)))
          .execute();
        await enqueue(signal('t1'), 'e1');
        const [leased] = await enqueue(signal('t1'), 'e2');
        await db
          .updateTable('webhook_deliveries')
          .set({ state: 'delivering', lease_until: at(-1).toISOString() })
          .where('id', '=', leased)
          .execute();
        if (engine.shared) {
          // Its generic plan (the one a prepared statement settles on), run on the queue's pool:
          // rows of webhook_endpoints read, in every scan of it.
          const client = await pgHotPool(db).connect();
          try {
            await client.query('set plan_cache_mode = force_generic_plan');
            await client.query(`prepare due_probe as ${SQL_LOCK_DUE_ENDPOINTS}`);
            const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
              `explain (analyze, format json) execute due_probe('${T0.toISOString()}', 100, ${T0.getTime()})`,
            );
            let read = 0;
            const walk = (n: PlanNode) => {
              if (n['Relation Name'] === 'webhook_endpoints') read += n['Actual Rows'] * n['Actual Loops'];
              for (const child of n.Plans ?? []) walk(child);
            };
            walk(rows[0]['QUERY PLAN'][0].Plan);
            assert.ok(read < 20, `${read} endpoint rows read for 2 endpoints with work among 204`);
          } finally {
            await client.query('deallocate due_probe').catch(() => {});
            await client.query('reset plan_cache_mode');
            client.release();
          }
        } else {
          const plan = await withStatements(db, (sql) =>
            sql.all<{ detail: string }>(`explain query plan ${SQL_DUE_ENDPOINTS}`, T0.toISOString(), T0.getTime()),
          );
          const details = plan.map((r) => r.detail);
          assert.ok(!details.some((d) => /^SCAN e\b/.test(d)), details.join('\n'));
          assert.ok(
            details.some((d) => /^SEARCH e USING/.test(d)),
            details.join('\n'),
          );
        }
        assert.deepEqual(byEndpoint(await claim(T0)), ['e1', 'e2'], 'a pending one and a run-out lease');
      });

      it('takes back a delivery whose lease expired (a crashed attempt), with the same id', async () => {
        const [id] = await enqueue(signal('t1'), 'e1');
        assert.equal((await claim(T0)).length, 1);
        assert.deepEqual(await claim(at(LEASE_MS - 1)), []);
        const again = await claim(at(LEASE_MS + 1));
        assert.deepEqual(
          again.map((c) => c.delivery.id),
          [id],
        );
        assert.equal(again[0].delivery.lease_until, at(2 * LEASE_MS + 1).toISOString());
      });

      it('takes back run-out leases that another queue wrote (a process that crashed), and each of several', async () => {
        await enqueue(signal('t1'), 'e1');
        await enqueue(signal('t1'), 'e1');
        assert.equal((await claim(T0)).length, 2);
        const restarted = engine.queueOf(db);
        const claimAt = (ms: number, perEndpoint: number) =>
          restarted.claim({ now: at(ms), leaseMs: LEASE_MS, limit: 100, perEndpoint, busy: new Map() });
        assert.deepEqual(await claimAt(LEASE_MS - 1, 1), [], 'not before they run out');
        assert.equal((await claimAt(LEASE_MS + 1, 1)).length, 1, 'one: the endpoint takes one at a time');
        assert.equal((await claimAt(LEASE_MS + 2, 1)).length, 1, 'the other, at the next claim');
        assert.deepEqual(await claimAt(LEASE_MS + 3, 1), []);
        assert.equal((await claimAt(2 * LEASE_MS + 3, 2)).length, 2, 'both, once their new leases ran out');
      });

      it('claims a delivery whose endpoint was disabled meanwhile, with the row saying so (the worker abandons it)', async () => {
        await enqueue(signal('t1'), 'e1');
        await db.updateTable('webhook_endpoints').set({ enabled: 0 }).where('id', '=', 'e1').execute();
        const [c] = await claim(T0);
        assert.equal(c.endpoint?.enabled, 0);
      });
    });

    it('releaseAllLeases makes every leased delivery pending again, and says how many', async () => {
      await enqueue(signal('t1'));
      assert.equal((await claim(T0)).length, 2);
      assert.equal(await queue.releaseAllLeases(), 2);
      assert.deepEqual(
        (await deliveries()).map((d) => [d.state, d.lease_until]),
        [
          ['pending', null],
          ['pending', null],
        ],
      );
      assert.equal(await queue.releaseAllLeases(), 0);
    });

    describe('recordOutcomes', () => {
      it('keeps nothing of an erased payload from an attempt in flight during the erasure', async () => {
        const s = signal('t1');
        await enqueue(s, 'e1');
        const [c] = await claim(T0);
        // The payload is erased while the attempt is out (erasePayload fails only pending ones).
        await db
          .updateTable('signals')
          .set({ erased_at: at(1).toISOString() })
          .where('id', '=', s.id)
          .execute();
        const o = {
          ...outcomeOf(c.delivery),
          sent: { signature: 'sha256=abc', standardSignature: 'v1,abc', traceparent: null },
        };
        await queue.recordOutcomes([o], (x) => retry(x, at(5000)));
        const [attempt] = await db.selectFrom('webhook_attempts').selectAll().execute();
        assert.deepEqual([attempt.status, attempt.response_excerpt, attempt.signature], [500, null, null]);
      });

      it('writes each kind of decision to its delivery, with its attempt row, and releases the lease', async () => {
        await enqueue(signal('t1'));
        await enqueue(signal('t1'), 'e1');
        const claimed = await claim(T0);
        assert.equal(claimed.length, 3);
        const done = T0.toISOString();
        const decisions: OutcomeDecision[] = [
          {
            ...retry(outcomeOf(claimed[0].delivery), T0),
            outcome: 'succeeded',
            delivery: { kind: 'succeeded', attempts: 1, lastStatus: 204, completedAt: done },
          },
          retry(outcomeOf(claimed[1].delivery), at(5000)),
          {
            outcome: 'failed',
            delivery: { kind: 'abandoned', lastError: 'the signal no longer exists', completedAt: done },
            attempt: undefined,
            failingSince: undefined,
            failureStreak: undefined,
            alert: undefined,
            disable: undefined,
          },
        ];
        const outcomes = claimed.map((c) => outcomeOf(c.delivery));
        const recorded = await queue.recordOutcomes(outcomes, (o) => decisions[outcomes.indexOf(o)]);
        assert.deepEqual(recorded.decisions, decisions);
        assert.equal(recorded.disabled.size, 0);
        const rows = new Map((await db.selectFrom('webhook_deliveries').selectAll().execute()).map((r) => [r.id, r]));
        const [ok, retried, abandoned] = claimed.map((c) => rows.get(c.delivery.id));
        assert.deepEqual(
          [ok?.state, ok?.attempts, ok?.last_status, ok?.last_error, ok?.completed_at, ok?.lease_until],
          ['succeeded', 1, 204, null, done, null],
        );
        assert.deepEqual(
          [retried?.state, retried?.attempts, retried?.last_status, retried?.last_error, retried?.next_attempt_at],
          ['pending', 1, 500, 'HTTP 500', at(5000).toISOString()],
        );
        assert.deepEqual(
          [
            abandoned?.state,
            abandoned?.attempts,
            abandoned?.last_status,
            abandoned?.last_error,
            abandoned?.lease_until,
          ],
          ['failed', 0, null, 'the signal no longer exists', null],
        );
        const attempts = await db.selectFrom('webhook_attempts').selectAll().orderBy('delivery_id').execute();
        assert.deepEqual(
          attempts
            .map((a) => [
              a.delivery_id,
              a.tenant_id,
              a.attempt,
              a.started_at,
              a.duration_ms,
              a.status,
              a.error,
              a.response_excerpt,
            ])
            .sort(),
          [
            [claimed[0].delivery.id, 't1', 1, done, 7, 500, 'HTTP 500', 'oops'],
            [claimed[1].delivery.id, 't1', 1, done, 7, 500, 'HTTP 500', 'oops'],
          ].sort(),
        );
        assert.deepEqual(await claim(at(5000)).then((c) => c.map((x) => x.delivery.id)), [claimed[1].delivery.id]);
      });

      if (engine.shared)
        it('a batch whose statement fails writes nothing of it (the commit sent behind it rolls back); the next one is written', async () => {
          await enqueue(signal('t1'), 'e1');
          await enqueue(signal('t1'), 'e1');
          const claimed = await claim(T0);
          // NaN is no integer: PostgreSQL refuses the second attempt's duration, and so the statement.
          const bad = claimed.map((c, i) => ({ ...outcomeOf(c.delivery), durationMs: i === 1 ? Number.NaN : 7 }));
          await assert.rejects(
            queue.recordOutcomes(bad, (o) => retry(o, at(5000))),
            /integer/,
          );
          assert.deepEqual(
            (await deliveries()).map((r) => [r.state, r.attempts]),
            [
              ['delivering', 0],
              ['delivering', 0],
            ],
          );
          assert.equal((await db.selectFrom('webhook_attempts').selectAll().execute()).length, 0);
          const good = claimed.map((c) => outcomeOf(c.delivery));
          await queue.recordOutcomes(good, (o) => retry(o, at(5000)));
          assert.deepEqual(
            (await deliveries()).map((r) => [r.state, r.attempts]),
            [
              ['pending', 1],
              ['pending', 1],
            ],
          );
          assert.equal((await db.selectFrom('webhook_attempts').selectAll().execute()).length, 2);
        });

      it('gives the policy each endpoint’s health as the batch has changed it so far', async () => {
        for (let i = 0; i < 3; i++) await enqueue(signal('t1', at(-i)), 'e1');
        await enqueue(signal('t2', at(1)));
        await db.updateTable('webhook_endpoints').set({ enabled: 0 }).where('id', '=', 'e4').execute();
        const claimed = await claim(at(1));
        const seen: [string, EndpointHealth | undefined][] = [];
        const streaks = ['2026-01-01T00:00:00.000Z', null, undefined];
        const policy: OutcomePolicy = (o, health) => {
          seen.push([o.delivery.endpoint_id, health]);
          const nth = seen.filter(([id]) => id === 'e1').length - 1;
          return {
            ...retry(o, at(1000)),
            failingSince: o.delivery.endpoint_id === 'e1' ? streaks[nth] : undefined,
          };
        };
        await queue.recordOutcomes(
          claimed.map((c) => outcomeOf(c.delivery)),
          policy,
        );
        // In claim order, which interleaves endpoints; each endpoint's health evolves by itself.
        assert.deepEqual(
          seen.filter(([id]) => id === 'e1'),
          [
            ['e1', { enabled: true, failingSince: null, failureStreak: 0, alertedPercent: 0 }],
            ['e1', { enabled: true, failingSince: '2026-01-01T00:00:00.000Z', failureStreak: 0, alertedPercent: 0 }],
            ['e1', { enabled: true, failingSince: null, failureStreak: 0, alertedPercent: 0 }],
          ],
        );
        assert.deepEqual(
          seen.filter(([id]) => id === 'e4'),
          [['e4', { enabled: false, failingSince: null, failureStreak: 0, alertedPercent: 0 }]],
        );
        const e1 = await db
          .selectFrom('webhook_endpoints')
          .selectAll()
          .where('id', '=', 'e1')
          .executeTakeFirstOrThrow();
        assert.equal(e1.failing_since, null, 'the last change stands');
      });

      it('skips a delivery that no longer exists: no decision, no attempt row, no change to its endpoint', async () => {
        const [gone] = await enqueue(signal('t1'), 'e1');
        const [kept] = await enqueue(signal('t1'), 'e2');
        const claimed = await claim(T0);
        await db.deleteFrom('webhook_deliveries').where('id', '=', gone).execute();
        const recorded = await queue.recordOutcomes(
          claimed.map((c) => outcomeOf(c.delivery)),
          (o) => ({ ...retry(o, at(1000)), failingSince: T0.toISOString() }),
        );
        const byId = new Map(claimed.map((c, i) => [c.delivery.id, recorded.decisions[i]]));
        assert.equal(byId.get(gone), undefined);
        assert.equal(byId.get(kept)?.outcome, 'retrying');
        const attempts = await db.selectFrom('webhook_attempts').select('delivery_id').execute();
        assert.deepEqual(
          attempts.map((a) => a.delivery_id),
          [kept],
        );
        const streaks = await db
          .selectFrom('webhook_endpoints')
          .select(['id', 'failing_since'])
          .orderBy('id')
          .execute();
        assert.deepEqual(
          streaks.map((e) => [e.id, e.failing_since]),
          [
            ['e1', null],
            ['e2', T0.toISOString()],
            ['e3', null],
            ['e4', null],
          ],
        );
      });

      it('asks the policy only about deliveries that still exist', async () => {
        const [gone] = await enqueue(signal('t1'), 'e1');
        const [kept] = await enqueue(signal('t1'), 'e2');
        const claimed = await claim(T0);
        await db.deleteFrom('webhook_deliveries').where('id', '=', gone).execute();
        const asked: string[] = [];
        await queue.recordOutcomes(
          claimed.map((c) => outcomeOf(c.delivery)),
          (o) => {
            asked.push(o.delivery.id);
            return retry(o, at(1000));
          },
        );
        assert.deepEqual(asked, [kept]);
      });

      it('disables an endpoint the policy disables, failing its pending deliveries, after the whole batch', async () => {
        await enqueue(signal('t1', at(-1)), 'e1');
        const [waiting] = await enqueue(signal('t1', at(10_000)), 'e1');
        const [other] = await enqueue(signal('t1'), 'e2');
        const claimed = await claim(T0, 100, 1);
        assert.equal(claimed.length, 2);
        const reason = 'disabled automatically: every delivery attempt failed since …';
        const when = at(1).toISOString();
        const recorded = await queue.recordOutcomes(
          claimed.map((c) => outcomeOf(c.delivery)),
          (o) => ({
            ...retry(o, at(60_000)),
            disable: o.delivery.endpoint_id === 'e1' ? { reason, at: when } : undefined,
          }),
        );
        assert.deepEqual([...recorded.disabled], [['e1', reason]]);
        const e1 = await db
          .selectFrom('webhook_endpoints')
          .selectAll()
          .where('id', '=', 'e1')
          .executeTakeFirstOrThrow();
        assert.deepEqual([e1.enabled, e1.disabled_reason, e1.updated_at], [0, reason, when]);
        const rows = await deliveries();
        for (const r of rows.filter((d) => d.endpoint_id === 'e1')) {
          assert.equal(r.state, 'failed', `${r.id === waiting ? 'the waiting' : 'the retried'} delivery is failed`);
          assert.equal(r.last_error, 'the endpoint was disabled');
          assert.equal(r.completed_at, when);
        }
        const e2 = rows.find((d) => d.id === other);
        assert.equal(e2?.state, 'pending', 'other endpoints keep their retries');
      });

      it('outcomes with the next claim (one transaction where the engine has it): the claim sees what they wrote', async () => {
        const [first] = await enqueue(signal('t1'), 'e1');
        const [second] = await enqueue(signal('t1'), 'e1');
        const [c] = await claim(T0, 1);
        assert.equal(c.delivery.id, first);
        const outcomes = [outcomeOf(c.delivery)];
        const policy = (o: AttemptOutcome) => retry(o, T0); // due again at once
        const request = { now: T0, leaseMs: LEASE_MS, limit: 10, perEndpoint: 16, busy: new Map<string, number>() };
        const { recorded, claimed } = queue.recordOutcomesAndClaim
          ? await queue.recordOutcomesAndClaim(outcomes, policy, request)
          : { recorded: await queue.recordOutcomes(outcomes, policy), claimed: await queue.claim(request) };
        assert.deepEqual(
          recorded.decisions.map((d) => d?.outcome),
          ['retrying'],
        );
        // The retry, written due now in the same transaction, is claimed with the waiting one.
        assert.deepEqual(claimed.map((x) => x.delivery.id).sort(), [first, second].sort());
        const retried = claimed.find((x) => x.delivery.id === first);
        assert.deepEqual([retried?.delivery.state, retried?.delivery.attempts], ['delivering', 1]);
        const attempts = await db.selectFrom('webhook_attempts').select(['delivery_id', 'status']).execute();
        assert.deepEqual(
          attempts.map((a) => [a.delivery_id, a.status]),
          [[first, 500]],
        );
      });

      const recordAndClaim = (outcomes: AttemptOutcome[], policy: OutcomePolicy, now: Date, perEndpoint = 16) => {
        const request = { now, leaseMs: LEASE_MS, limit: 10, perEndpoint, busy: new Map<string, number>() };
        return queue.recordOutcomesAndClaim
          ? queue.recordOutcomesAndClaim(outcomes, policy, request)
          : (async () => ({
              recorded: await queue.recordOutcomes(outcomes, policy),
              claimed: await queue.claim(request),
            }))();
      };

      it('outcomes with the next claim: a retry not yet due stays pending, the waiting ones of every endpoint are claimed', async () => {
        const [first] = await enqueue(signal('t1'), 'e1');
        const [second] = await enqueue(signal('t1'), 'e1');
        const [other] = await enqueue(signal('t1'), 'e2');
        const [c] = await claim(T0, 1);
        assert.equal(c.delivery.id, first);
        const { recorded, claimed } = await recordAndClaim([outcomeOf(c.delivery)], (o) => retry(o, at(60_000)), at(1));
        assert.deepEqual(
          recorded.decisions.map((d) => d?.outcome),
          ['retrying'],
        );
        assert.deepEqual(claimed.map((x) => x.delivery.id).sort(), [second, other].sort());
        const rows = new Map((await deliveries()).map((d) => [d.id, d]));
        assert.deepEqual(
          [rows.get(first)?.state, rows.get(first)?.attempts, rows.get(first)?.next_attempt_at],
          ['pending', 1, at(60_000).toISOString()],
        );
        assert.deepEqual([rows.get(second)?.state, rows.get(other)?.state], ['delivering', 'delivering']);
        assert.equal((await db.selectFrom('webhook_attempts').select('id').execute()).length, 1);
        // Claimed again once due, attempt 2.
        const [again] = await claim(at(60_000));
        assert.deepEqual([again.delivery.id, again.delivery.attempts], [first, 1]);
      });

      it("outcomes with the next claim: a retry they make due now, its endpoint's only work, is claimed by it", async () => {
        const [only] = await enqueue(signal('t1'), 'e1');
        const [c] = await claim(T0, 1);
        const { claimed } = await recordAndClaim([outcomeOf(c.delivery)], (o) => retry(o, T0), at(1));
        assert.deepEqual(
          claimed.map((x) => [x.delivery.id, x.delivery.attempts]),
          [[only, 1]],
        );
      });

      it('outcomes with the next claim that disable an endpoint: none of its deliveries is claimed, the others are', async () => {
        const [first] = await enqueue(signal('t1'), 'e1');
        const [waiting] = await enqueue(signal('t1'), 'e1');
        const [other] = await enqueue(signal('t1'), 'e2');
        const [c] = await claim(T0, 1);
        assert.equal(c.delivery.id, first);
        const reason = 'disabled automatically: every delivery attempt failed since …';
        const { recorded, claimed } = await recordAndClaim(
          [outcomeOf(c.delivery)],
          (o) => ({ ...retry(o, at(60_000)), disable: { reason, at: at(1).toISOString() } }),
          at(1),
        );
        assert.deepEqual([...recorded.disabled], [['e1', reason]]);
        assert.deepEqual(
          claimed.map((x) => x.delivery.id),
          [other],
        );
        const rows = new Map((await deliveries()).map((d) => [d.id, d]));
        assert.deepEqual([rows.get(first)?.state, rows.get(waiting)?.state], ['failed', 'failed']);
      });

      it('outcomes with the next claim fail together: a failed write leaves the leases and claims nothing', async () => {
        const [first] = await enqueue(signal('t1'), 'e1');
        const [second] = await enqueue(signal('t1'), 'e2');
        const [c] = await claim(T0, 1);
        assert.equal(c.delivery.id, first);
        // An attempt without its number: the outcomes' write fails on the column's NOT NULL.
        const broken = (o: AttemptOutcome): OutcomeDecision => {
          const decided = retry(o, at(60_000));
          return { ...decided, attempt: decided.attempt && { ...decided.attempt, attempt: null as unknown as number } };
        };
        await assert.rejects(recordAndClaim([outcomeOf(c.delivery)], broken, at(1)), /null/i);
        const rows = new Map((await deliveries()).map((d) => [d.id, d]));
        assert.deepEqual(
          [rows.get(first)?.state, rows.get(first)?.attempts, rows.get(second)?.state],
          ['delivering', 0, 'pending'],
        );
        assert.equal((await db.selectFrom('webhook_attempts').select('id').execute()).length, 0);
      });
    });

    describe('subscriptions and filters (enqueue)', () => {
      const setEndpoint = (id: string, changes: Record<string, unknown>) =>
        db.updateTable('webhook_endpoints').set(changes).where('id', '=', id).execute();
      const endpointsOf = async (ids: string[]) => {
        if (ids.length === 0) return [];
        const rows = await db.selectFrom('webhook_deliveries').select('endpoint_id').where('id', 'in', ids).execute();
        return rows.map((r) => r.endpoint_id).sort();
      };

      it('writes a signal only for the endpoints whose event types, minimum severity and signal types it matches', async () => {
        await setEndpoint('e1', { min_severity: 4 });
        await setEndpoint('e2', { signal_types: JSON.stringify(['ssh_login', 'sudo_command_executed']) });
        const cases: [Partial<SignalTable>, string[]][] = [
          [{ severity: 3 }, ['e2']],
          [{ severity: 4 }, ['e1', 'e2']],
          [{ severity: 5, signal_type: 'file_changed' }, ['e1']],
          [{ severity: 1, signal_type: 'ssh_login' }, ['e2']],
        ];
        for (const [fields, want] of cases)
          assert.deepEqual(
            await endpointsOf(await enqueue({ ...signal('t1'), ...fields })),
            want,
            JSON.stringify(fields),
          );
        await setEndpoint('e2', { event_mask: 2 }); // test events only
        assert.deepEqual(await endpointsOf(await enqueue({ ...signal('t1'), severity: 5 })), ['e1']);
        assert.deepEqual(
          await endpointsOf(await enqueue(signal('t1'), 'e2')),
          ['e2'],
          'a test event goes to the one named',
        );
      });

      it('matches each signal of one call (one transaction) on its own tenant, severity and type', async () => {
        await setEndpoint('e1', { min_severity: 4 });
        await setEndpoint('e2', { signal_types: JSON.stringify(['ssh_login']) });
        const cases: [SignalTable, string[]][] = [
          [{ ...signal('t1'), severity: 3 }, []],
          [{ ...signal('t1'), severity: 4 }, ['e1']],
          [{ ...signal('t1'), severity: 3 }, []],
          [{ ...signal('t1'), severity: 3, signal_type: 'ssh_login' }, ['e2']],
          [{ ...signal('t2'), severity: 3 }, ['e4']],
          [{ ...signal('t1'), severity: 4, signal_type: 'ssh_login' }, ['e1', 'e2']],
          [{ ...signal('t1'), severity: 4 }, ['e1']],
        ];
        const results = await queue.enqueue(cases.map(([s]) => ({ signal: s })));
        for (const [i, r] of results.entries()) {
          assert.ok(r.ok);
          assert.deepEqual(await endpointsOf(r.deliveryIds), cases[i][1], `signal ${i}`);
        }
      });

      it('writes an operational event for the subscribed endpoints other than the one it is about', async () => {
        await setEndpoint('e1', { event_mask: 1 | 4 });
        await setEndpoint('e2', { event_mask: 4 });
        const event = {
          ...signal('t1'),
          is_test: 1,
          event_type: 'endpoint.failing',
          event_data: '{"endpoint_id":"e2"}',
          severity: 1,
        };
        const [r] = await queue.enqueue([{ signal: event, excludeEndpointId: 'e2' }]);
        assert.ok(r.ok);
        assert.deepEqual(await endpointsOf(r.deliveryIds), ['e1']);
        const disabled = { ...event, id: timeOrderedId('evt'), event_type: 'endpoint.disabled' };
        const [none] = await queue.enqueue([{ signal: disabled, excludeEndpointId: 'e3' }]);
        assert.ok(none.ok);
        assert.deepEqual(none.deliveryIds, [], 'nobody subscribes to endpoint.disabled');
        const stored = await db.selectFrom('signals').selectAll().where('id', '=', event.id).executeTakeFirstOrThrow();
        assert.deepEqual([stored.event_type, stored.event_data], ['endpoint.failing', '{"endpoint_id":"e2"}']);
      });
    });

    describe('rate limit (claim)', () => {
      it('leases no more than a limited endpoint’s rate allows, and the rest when their time comes; others are not held back', async () => {
        await db.updateTable('webhook_endpoints').set({ rate_limit: 2 }).where('id', '=', 'e1').execute();
        for (let i = 0; i < 5; i++) await enqueue(signal('t1', at(-1000 + i)));
        const first = await claim(T0);
        assert.deepEqual(byEndpoint(first), ['e1', 'e2', 'e2', 'e2', 'e2', 'e2']);
        assert.deepEqual(byEndpoint(await claim(at(499))), [], 'the next one 1/rate later');
        assert.deepEqual(byEndpoint(await claim(at(500))), ['e1']);
        assert.deepEqual(byEndpoint(await claim(at(1000))), ['e1']);
        assert.deepEqual(byEndpoint(await claim(at(2000))), ['e1'], 'unused time is not banked beyond the burst');
        assert.deepEqual(byEndpoint(await claim(at(5000))), ['e1']);
        assert.deepEqual(byEndpoint(await claim(at(9000))), [], 'all five sent');
      });

      it('leaves throttled endpoints out: their older backlogs never take the places of other endpoints', async () => {
        await db.updateTable('webhook_endpoints').set({ rate_limit: 0.01 }).where('id', 'in', ['e1', 'e2']).execute();
        for (let i = 0; i < 5; i++) await enqueue(signal('t1', at(-10_000 + i)));
        assert.deepEqual(byEndpoint(await claim(T0)).sort(), ['e1', 'e2'], 'one each, their burst');
        await enqueue(signal('t2', at(500)), 'e4');
        // A claim of one: e1's and e2's backlogs are older, but neither may send for 100 s.
        assert.deepEqual(byEndpoint(await claim(at(1000), 1)), ['e4']);
        const later = byEndpoint(await claim(at(100_000))).filter((e) => e !== 'e4'); // e4's lease ran out meanwhile
        assert.deepEqual(later.sort(), ['e1', 'e2'], 'each again after 1/rate');
      });
    });

    describe('operational events and health (recordOutcomes)', () => {
      it('writes an alert once, with its event, deliveries to the subscribed others and an audit entry; counts attempts per hour', async () => {
        await db
          .updateTable('webhook_endpoints')
          .set({ failing_since: at(-30_000).toISOString(), failure_streak: 2 })
          .where('id', '=', 'e1')
          .execute();
        await db
          .updateTable('webhook_endpoints')
          .set({ event_mask: 4 | 8 })
          .where('id', '=', 'e2')
          .execute();
        await enqueue(signal('t1'), 'e1');
        await enqueue(signal('t1'), 'e1');
        const claimed = await claim(T0);
        const alert = {
          percent: 50,
          failingSince: at(-30_000).toISOString(),
          disableAt: at(30_000).toISOString(),
          at: T0.toISOString(),
        };
        const policy: OutcomePolicy = (o, h) => ({
          ...retry(o, at(1000)),
          failureStreak: (h?.failureStreak ?? 0) + 1,
          alert: h?.alertedPercent === 50 ? undefined : alert,
        });
        await queue.recordOutcomes(
          claimed.map((c) => outcomeOf(c.delivery)),
          policy,
        );
        const e1 = await db
          .selectFrom('webhook_endpoints')
          .selectAll()
          .where('id', '=', 'e1')
          .executeTakeFirstOrThrow();
        assert.deepEqual([e1.failure_streak, e1.failing_alerted], [4, 50]);
        const events = await db
          .selectFrom('signals')
          .selectAll()
          .where('event_type', '=', 'endpoint.failing')
          .execute();
        assert.equal(events.length, 1, 'one event per endpoint and batch');
        const data = JSON.parse(events[0].event_data ?? '{}');
        assert.deepEqual(
          [data.endpoint_id, data.percent, data.failing_since, data.disable_at, data.failure_streak, data.last_error],
          ['e1', 50, alert.failingSince, alert.disableAt, 4, 'HTTP 500'],
        );
        const to = await db
          .selectFrom('webhook_deliveries')
          .select(['endpoint_id', 'state'])
          .where('signal_id', '=', events[0].id)
          .execute();
        assert.deepEqual(
          to.map((d) => [d.endpoint_id, d.state]),
          [['e2', 'pending']],
        );
        const audit = await db.selectFrom('audit_log').selectAll().execute();
        assert.deepEqual(
          audit.map((a) => [a.action, a.target, a.tenant_id, a.actor_role]),
          [['webhook_endpoint.failing', 'e1', 't1', 'system']],
        );
        const stats = await db.selectFrom('webhook_endpoint_stats').selectAll().execute();
        assert.deepEqual(
          stats.map((r) => [r.endpoint_id, r.hour, r.succeeded, r.failed]),
          [['e1', '2026-11-21T12:00:00.000Z', 0, 2]],
        );
      });
    });

    if (engine.shared)
      it('runs on a pool of its own whose planner only looks rows up by index; the rest keep its defaults', async () => {
        const setting = async (pool: pg.Pool) =>
          (await pool.query<{ enable_hashjoin: string }>('show enable_hashjoin')).rows[0].enable_hashjoin;
        assert.equal(await setting(pgHotPool(db)), 'off');
        assert.equal(await setting(pgPool(db)), 'on');
      });

    /** The nodes of the plan a hot-path connection makes for `statement` (once, as generic plans are). */
    const planNodes = async (statement: string) => {
      const client = await pgHotPool(db).connect();
      try {
        await client.query(`prepare probe as ${statement}`);
        const params = Math.max(...[...statement.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
        const nulls = Array.from({ length: params }, () => 'null').join(', ');
        const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(`explain (format json) execute probe(${nulls})`);
        const nodes: { 'Relation Name'?: string; 'Index Name'?: string; 'Index Cond'?: string; 'Node Type': string }[] =
          [];
        const walk = (node: Record<string, unknown>) => {
          nodes.push(node as (typeof nodes)[number]);
          for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
        };
        walk((rows[0]['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0].Plan);
        return nodes;
      } finally {
        await client.query('deallocate probe').catch(() => {});
        client.release();
      }
    };

    if (engine.shared)
      it("finds each signal's endpoints by its tenant, in the plan made once on empty tables", async () => {
        const endpoints = (await planNodes(SQL_ENQUEUE)).filter((n) => n['Relation Name'] === 'webhook_endpoints');
        assert.ok(endpoints.length > 0);
        for (const n of endpoints)
          assert.match(n['Index Cond'] ?? '', /\(tenant_id = i(_\d+)?\.tenant_id\)/, JSON.stringify(n));
      });

    if (engine.shared)
      it('writes outcomes to the rows of their ids alone, in the plan made once on small month partitions', async () => {
        // The server's layout: this month's partition and the next two beside the default one.
        // A plan made over them while they are small once read a whole partition per batch.
        await ensurePartitions(db, T0);
        const nodes = await planNodes(SQL_WRITE_OUTCOMES);
        // Every read of the table: a sequential scan, or the index scan that finds its rows.
        const reads = ['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Index Scan'];
        const read = (table: string) =>
          nodes.filter(
            (n) => reads.includes(n['Node Type']) && (n['Index Name'] ?? n['Relation Name'] ?? '').startsWith(table),
          );
        const deliveries = read('webhook_deliveries_p');
        assert.ok(deliveries.length > 0);
        for (const n of [...deliveries, ...read('webhook_endpoints')]) {
          assert.notEqual(n['Node Type'], 'Seq Scan', JSON.stringify(n));
          assert.match(n['Index Cond'] ?? '', /\(id = ANY \(\$(1|18)\)\)/, JSON.stringify(n));
        }
      });

    if (engine.shared)
      describe('shared by replicas', () => {
        /** A replica's claim, counting what it claimed before as in flight (as its worker does). */
        const busyOf = new Map<DeliveryQueue, Map<string, number>>();
        const claimOf = async (q: DeliveryQueue, limit: number, perEndpoint: number) => {
          const busy = busyOf.get(q) ?? new Map<string, number>();
          busyOf.set(q, busy);
          const claimed = await q.claim({ now: T0, leaseMs: LEASE_MS, limit, perEndpoint, busy });
          for (const c of claimed) busy.set(c.delivery.endpoint_id, (busy.get(c.delivery.endpoint_id) ?? 0) + 1);
          return claimed;
        };

        it('claims of several replicas at once never take one delivery twice nor pass the per-endpoint limit together', async () => {
          for (let i = 0; i < 60; i++) await enqueue(signal('t1', at(-i)));
          const replicas = [
            queue,
            ...(await Promise.all([1, 2, 3].map(async () => engine.queueOf(await test.openAnother())))),
          ];
          const rounds: ClaimedDelivery[][] = [];
          for (let round = 0; round < 3; round++)
            rounds.push(...(await Promise.all(replicas.map((r) => claimOf(r, 5, 4)))));
          const all = rounds.flat();
          assert.equal(new Set(all.map((c) => c.delivery.id)).size, all.length, 'a delivery was claimed twice');
          assert.deepEqual(byEndpoint(all), ['e1', 'e1', 'e1', 'e1', 'e2', 'e2', 'e2', 'e2']);
          const leased = await db
            .selectFrom('webhook_deliveries')
            .select(['endpoint_id', (e) => e.fn.countAll<number>().as('n')])
            .where('state', '=', 'delivering')
            .groupBy('endpoint_id')
            .orderBy('endpoint_id')
            .execute();
          assert.deepEqual(
            leased.map((r) => [r.endpoint_id, r.n]),
            [
              ['e1', 4],
              ['e2', 4],
            ],
            'counts come back as numbers',
          );
        });

        it('skips deliveries another transaction holds locked (FOR UPDATE SKIP LOCKED) instead of waiting', async () => {
          const [locked] = await enqueue(signal('t1', at(-5)), 'e1');
          const [free] = await enqueue(signal('t1', at(-1)), 'e1');
          const other = await test.openAnother();
          let release = () => {};
          const holding = other.transaction().execute(async (trx) => {
            await trx.selectFrom('webhook_deliveries').select('id').where('id', '=', locked).forUpdate().execute();
            await new Promise<void>((r) => {
              release = r;
            });
          });
          await new Promise((r) => setTimeout(r, 50));
          const t = performance.now();
          const claimed = await claim(T0).finally(() => setTimeout(() => release(), 3000));
          assert.ok(performance.now() - t < 2000, 'the claim waited for the lock');
          assert.deepEqual(
            claimed.map((c) => c.delivery.id),
            [free],
          );
          release();
          await holding;
          assert.deepEqual(
            (await claim(T0)).map((c) => c.delivery.id),
            [locked],
          );
        });

        it('wakes the watchers of other replicas when an enqueue commits (LISTEN/NOTIFY)', async () => {
          const other = engine.queueOf(await test.openAnother());
          let woken = 0;
          const stop = await other.watch(() => woken++);
          try {
            const before = woken;
            await enqueue(signal('t1'));
            const deadline = Date.now() + 5000;
            while (woken === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
            assert.ok(woken > before, 'no NOTIFY arrived');
          } finally {
            await stop();
          }
        });
      });
  });
}
