// The delivery queue on PostgreSQL, shared by any number of guard-server replicas
// (docs/decisions/0009-postgresql.md). The same contract as the SQLite queue, written for a
// database that other processes claim from at the same time:
//
// - enqueue: each group commit is one statement, whatever its size, committed on its own (one
//   round trip: the POSTs wait for it): the signals inserted from arrays (unnest; a duplicate
//   id is skipped and reported for its entry alone), and a delivery for each new signal's
//   enabled endpoints. Its commit NOTIFYs the other replicas (LISTEN in `watch`), so they need
//   not poll for work.
// - claim: FOR UPDATE SKIP LOCKED, with per-endpoint limits that hold across replicas: each
//   endpoint with due work is taken under a transaction advisory lock (tried, never waited
//   for: an endpoint another replica is claiming right now is skipped), and only then are the
//   live leases the other replicas hold counted (`leased_by`), by a second statement whose
//   snapshot sees every claim committed before; this process's own attempts in flight come
//   from its memory, as on SQLite (a finished attempt frees its slot before its outcome is
//   written). Endpoints are served oldest-due first, and within a claim round-robin (each
//   endpoint's first due delivery, then each one's second …), so one endpoint's backlog
//   never takes the slots of another's. A rate-limited endpoint's bucket (rate-limit.ts) is
//   a row of webhook_endpoint_rates, read and written under the same lock, so its limit too
//   holds across replicas.
// - leases expire: a row whose holder died (`delivering`, lease_until passed) is claimed again
//   like a due one. No replica ever releases leases wholesale: the others hold live ones.
// - recordOutcomes: one transaction; the endpoints' rows are locked first (in id order, the
//   order every writer of an endpoint and its deliveries takes), their health read, the
//   shared planner decides in memory (outcome-plan.ts), and one statement writes every
//   delivery, attempt and streak.
//
// Hot paths, so SQL text runs as named prepared statements (no query building), as the SQLite
// queue runs prepared statements, on a pool of its own whose planner only ever looks rows up by
// index (db/postgres.ts, HOT_PATH_PLANNER).

import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { DeliveryState, SignalTable, WebhookDeliveryTable } from '../db/index.ts';
import { type Db, pgHotPool, pgListenClient } from '../db/index.ts';
import { timeOrderedUuid } from '../kernel/ids.ts';
import type {
  ClaimedDelivery,
  ClaimRequest,
  DeliveryEndpointRow,
  DeliveryQueue,
  EnqueueResult,
  OutboxEntry,
  OutcomePolicy,
  RecordedOutcomes,
} from './delivery-queue.ts';
import { answerLikeEarlier, idempotencyKeyOf } from './delivery-queue.ts';
import type { AttemptCounts } from './endpoint-health.ts';
import { announce, type EventEndpoint } from './operational-events.ts';
import { planOutcomes, recordedOf } from './outcome-plan.ts';
import type { AttemptOutcome, EndpointHealth } from './outcome-policy.ts';
import { advance, allowance, nextAllowedMs, RateWakeups } from './rate-limit.ts';
import { EVENT_BITS, eventBitOf } from './subscriptions.ts';

/** The channel enqueue notifies and `watch` listens on. */
export const WORK_CHANNEL = 'guard_deliveries';
/** How soon a claim that found an endpoint held by another replica's claim looks again. */
const LOOK_AGAIN_MS = 5;
/** First key of the claim's per-endpoint advisory locks (the second is a hash of the endpoint id). */
const CLAIM_LOCK_CLASS = 0x6763; // "gc"

/**
 * One group commit: the signals, and for each one inserted (a duplicate id or idempotency key
 * writes nothing) a delivery to each of its tenant's enabled endpoints that takes it. A
 * delivery's id is its signal's `delivery_base` (a UUIDv7 of the signal's receipt, made in
 * JavaScript) with its last 48 bits from MD5 of that base and the endpoint's id: time-ordered
 * like every id of the table, and as unique as random ones. Answers a row per inserted signal
 * and delivery (a signal without any: one row, delivery_id null); the NOTIFY goes out at the
 * commit if any delivery was written.
 */
export const SQL_ENQUEUE = `
  with input as materialized (
    select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[],
      $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::int[], $15::text[],
      $16::text[], $17::text[], $18::text[], $19::int[], $20::text[], $21::text[], $22::text[])
      as i(id, tenant_id, agent_id, server_id, server_name, signal_type, severity, description, identity_id,
        identity_name, environment, created_at, received_at, is_test, only_endpoint, event_type, event_data,
        exclude_endpoint, event_bit, traceparent, idempotency_key, delivery_base)
  ),
  inserted as (
    insert into signals (id, tenant_id, agent_id, server_id, server_name, signal_type, severity, description,
      identity_id, identity_name, environment, created_at, received_at, is_test, event_type, event_data, traceparent,
      idempotency_key)
    select id, tenant_id, agent_id, server_id, server_name, signal_type, severity, description, identity_id,
      identity_name, environment, created_at, received_at, is_test, event_type, event_data, traceparent,
      idempotency_key from input
    on conflict do nothing
    returning id
  ),
  deliveries as (
    insert into webhook_deliveries (id, tenant_id, signal_id, endpoint_id, state, attempts, next_attempt_at, created_at)
    select overlay(i.delivery_base placing substr(md5(i.delivery_base || e.id), 1, 12) from 25 for 12),
      i.tenant_id, i.id, e.id, 'pending', 0, i.received_at, i.received_at
    from inserted s
    join input i on i.id = s.id
    -- Lateral, and kept a subquery (offset 0): each signal's tenant's endpoints by index. As a
    -- join, a plan made on empty tables read every endpoint, then matched the signals to them.
    cross join lateral (select e.id from webhook_endpoints e
      where e.tenant_id = i.tenant_id and e.enabled = 1
        and (case when i.only_endpoint is not null then e.id = i.only_endpoint
          else (e.event_mask & i.event_bit) <> 0 and e.id is distinct from i.exclude_endpoint
            and (i.event_bit <> ${EVENT_BITS.signal_created} or (e.min_severity <= i.severity
              and (e.signal_types is null or e.signal_types::jsonb ? i.signal_type))) end)
      offset 0) e
    returning id, signal_id, endpoint_id
  )
  select s.id as signal_id, d.id as delivery_id,
    -- Read by nobody: evaluated once, it queues the NOTIFY (sent at the commit) if a delivery was written.
    (select pg_notify('${WORK_CHANNEL}', $23) from deliveries limit 1) as notify
  from inserted s left join deliveries d on d.signal_id = s.id
  order by s.id, d.endpoint_id`;

/**
 * The signals that hold these (tenant, agent, idempotency key)s, with their delivery counts:
 * the answers to entries whose key another signal already has. Read in a statement after the
 * insert, so (read committed) it sees a signal another transaction committed while the insert
 * waited on its key.
 */
const SQL_SIGNALS_BY_KEY = `
  select s.id, s.agent_id, s.idempotency_key,
    (select count(*) from webhook_deliveries d where d.signal_id = s.id and d.tenant_id = s.tenant_id)::int as deliveries
  from unnest($1::text[], $2::text[], $3::text[]) as k(tenant_id, agent_id, idempotency_key)
  join signals s on s.agent_id = k.agent_id and s.idempotency_key = k.idempotency_key and s.tenant_id = k.tenant_id`;

/**
 * A recursive CTE `name(id, due)`: each endpoint with a delivery in `state` and the smallest
 * `column` of those, by skipping through the partial index on (endpoint_id, column) for that
 * state one endpoint at a time: one index descent per endpoint, whose first entry is its oldest.
 */
const endpointsIn = (
  name: string,
  state: DeliveryState,
  column: 'next_attempt_at' | 'lease_until',
) => `${name}(id, due) as (
    (select x.endpoint_id, x.${column} from webhook_deliveries x
      where x.state = '${state}' order by x.endpoint_id, x.${column} limit 1)
    union all
    select n.endpoint_id, n.${column} from ${name} p cross join lateral (
      select x.endpoint_id, x.${column} from webhook_deliveries x
      where x.state = '${state}' and x.endpoint_id > p.id order by x.endpoint_id, x.${column} limit 1) n
  )`;

/**
 * Endpoints with due work (pending and due, or leased with the lease run out), oldest due
 * first, at most $2, each locked for this transaction if no other claim holds it (`taken`).
 * Only endpoints with a pending or leased delivery are looked at (endpointsIn), never every
 * endpoint of every tenant: a claim's cost follows the endpoints with work, not the number
 * configured.
 * Left out: endpoints their rate limit holds back now (GCRA allows one iff the bucket's `tat`
 * ≤ now + (burst − 1) × interval, $3 = now in Unix ms; rate-limit.ts), so that throttled endpoints
 * with old backlogs never take the places of others whose deliveries wait.
 */
export const SQL_LOCK_DUE_ENDPOINTS = `
  with recursive ${endpointsIn('pending', 'pending', 'next_attempt_at')},
  ${endpointsIn('leased', 'delivering', 'lease_until')},
  due as materialized (
    select w.id, min(w.due) as oldest
    from (select id, due from pending where due <= $1 union all select id, due from leased where due < $1) w
    group by w.id
  ),
  ordered as materialized (
    select d.id, d.oldest from due d join webhook_endpoints e on e.id = d.id
    where (e.rate_limit is null or coalesce(
      (select r.tat_ms from webhook_endpoint_rates r where r.endpoint_id = e.id), 0)
      <= $3::bigint + (greatest(1, floor(e.rate_limit / 10)) - 1) * 1000.0 / e.rate_limit + 1)
    order by d.oldest)
  select o.id, pg_try_advisory_xact_lock(${CLAIM_LOCK_CLASS}, hashtext(o.id)) as taken,
    (select e.rate_limit from webhook_endpoints e where e.id = o.id) as rate_limit
  from ordered o limit $2`;

/** Rate-limited endpoints' buckets, read after their claim locks are held (a new snapshot). */
const SQL_RATES = 'select endpoint_id, tat_ms from webhook_endpoint_rates where endpoint_id = any($1::text[])';
const SQL_SAVE_RATES = `
  insert into webhook_endpoint_rates (endpoint_id, tat_ms)
  select * from unnest($1::text[], $2::bigint[])
  on conflict (endpoint_id) do update set tat_ms = excluded.tat_ms`;

/**
 * Leases, for the endpoints locked above, as many due deliveries as each has free slots: the
 * per-endpoint limit less this process's attempts in flight ($2, from memory) and less the
 * live leases other processes hold (from the table, by `leased_by`), and at most what its
 * rate limit allows now ($8). Round-robin over
 * endpoints, oldest first within each, at most $limit in all.
 * Returns the leased rows with their signal and endpoint, each found by its key (scalar
 * subqueries: a join would let a generic plan hash the whole signals table).
 */
const SQL_CLAIM = `
  with ep as (
    select u.id, least(u.allow, $3::int - u.busy - (select count(*) from webhook_deliveries b
        where b.endpoint_id = u.id and b.state = 'delivering' and b.lease_until >= $4
          and b.leased_by is distinct from $7)) as free
    from unnest($1::text[], $2::int[], $8::int[]) as u(id, busy, allow)
  ),
  candidates as (
    select c.id, c.due, row_number() over (partition by ep.id order by c.due) as turn
    from ep cross join lateral (
      select * from (select x.id, x.lease_until as due from webhook_deliveries x
        where x.endpoint_id = ep.id and x.state = 'delivering' and x.lease_until < $4
        order by x.lease_until limit greatest(ep.free, 0) for update skip locked) expired
      union all
      select * from (select x.id, x.next_attempt_at from webhook_deliveries x
        where x.endpoint_id = ep.id and x.state = 'pending' and x.next_attempt_at <= $4
        order by x.next_attempt_at limit greatest(ep.free, 0) for update skip locked) pending
      limit greatest(ep.free, 0)
    ) c
    where ep.free > 0
  ),
  picked as (select id, turn, due from candidates order by turn, due limit $5),
  leased as (
    update webhook_deliveries d set state = 'delivering', lease_until = $6, leased_by = $7
    from picked where d.id = picked.id
    returning d.*, picked.turn as claim_turn, picked.due as claim_due
  )
  select l.*,
    (select row_to_json(s) from signals s where s.id = l.signal_id) as signal,
    -- Once per endpoint, on its first turn (which every endpoint with a claimed row has): the
    -- rows of one endpoint share one object (claim, below).
    case when l.claim_turn = 1 then (select json_build_object('id', e.id, 'updated_at', e.updated_at, 'url', e.url, 'enabled', e.enabled,
        'secret_sealed', e.secret_sealed, 'headers', e.headers, 'previous_secret_sealed', e.previous_secret_sealed,
        'previous_secret_expires_at', e.previous_secret_expires_at,
        'rotation_proof_signal_id', e.rotation_proof_signal_id, 'tls_client_certificate', e.tls_client_certificate,
        'tls_client_key_sealed', e.tls_client_key_sealed, 'tls_ca_certificates', e.tls_ca_certificates,
        'auth_sealed', e.auth_sealed)
      from webhook_endpoints e where e.id = l.endpoint_id) end as endpoint
  from leased l
  order by l.claim_turn, l.claim_due, l.id`;

/**
 * The endpoints' health, each row locked until the outcomes are written; and which of the
 * deliveries still exist (an endpoint's deletion, which takes its deliveries, locks its row
 * first, so none of these can go while the endpoint stays locked).
 */
const SQL_LOCK_HEALTH = `
  with health as (
    select id, enabled, failing_since, failure_streak, failing_alerted from webhook_endpoints
    where id = any($1::text[]) order by id for no key update
  )
  select id, enabled, failing_since, failure_streak, failing_alerted, true as is_endpoint from health
  union all
  select d.id, null, null, null, null, false from webhook_deliveries d where d.id = any($2::text[])`;

/**
 * Every decided delivery, its attempt and its endpoint's streak. Each row is found by its key,
 * stated twice (`= any` beside the join): the plan is made once per connection, perhaps while
 * the month's partitions are still small, and such a plan once joined the batch to a read of
 * the whole partition (a cost that grew with the month: bench:queue-cycle, 320 µs per delivery
 * against 78); with the ids as its index condition, no plan reads more rows than the batch has.
 */
export const SQL_WRITE_OUTCOMES = `
  with updated as (
    update webhook_deliveries d set
      state = u.state,
      attempts = case when u.kind = 'abandoned' then d.attempts else u.attempts end,
      lease_until = null,
      leased_by = null,
      last_status = case when u.kind = 'abandoned' then d.last_status else u.last_status end,
      last_error = u.last_error,
      next_attempt_at = case when u.kind = 'retry' then u.next_attempt_at else d.next_attempt_at end,
      completed_at = case when u.kind = 'retry' then d.completed_at else u.completed_at end
    from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[])
      as u(id, kind, state, attempts, last_status, last_error, next_attempt_at, completed_at)
    where d.id = u.id and d.id = any($1::text[])
    returning d.id
  ),
  attempts as (
    insert into webhook_attempts (id, delivery_id, tenant_id, attempt, started_at, duration_ms, status, error,
      response_excerpt, signature, traceparent, standard_signature, response_headers)
    select a.id, a.delivery_id, a.tenant_id, a.attempt, a.started_at, a.duration_ms, a.status, a.error,
      case when x.erased_at is null then a.response_excerpt end, case when x.erased_at is null then a.signature end,
      a.traceparent, case when x.erased_at is null then a.standard_signature end, a.response_headers
    from unnest($9::text[], $10::text[], $11::text[], $12::int[], $13::text[], $14::int[], $15::int[],
      $16::text[], $17::text[], $26::text[], $27::text[], $28::text[], $29::text[], $30::text[]) as a(id, delivery_id,
      tenant_id, attempt, started_at, duration_ms, status, error, response_excerpt, signature, traceparent, signal_id,
      standard_signature, response_headers)
    -- An attempt in flight while its signal's payload was erased keeps nothing of it.
    left join lateral (select s.erased_at from signals s where s.id = a.signal_id) x on true
  ),
  streaks as (
    update webhook_endpoints e set failing_since = f.failing_since, failure_streak = f.failure_streak,
      failing_alerted = f.failing_alerted
    from unnest($18::text[], $19::text[], $20::int[], $21::int[]) as f(id, failing_since, failure_streak, failing_alerted)
    where e.id = f.id and e.id = any($18::text[])
  ),
  stats as (
    insert into webhook_endpoint_stats (endpoint_id, hour, succeeded, failed)
    select * from unnest($22::text[], $23::text[], $24::int[], $25::int[])
    on conflict (endpoint_id, hour) do update set succeeded = webhook_endpoint_stats.succeeded + excluded.succeeded,
      failed = webhook_endpoint_stats.failed + excluded.failed
  )
  select id from updated`;

const SQL_EVENT_ENDPOINT =
  'select id, tenant_id, name, url, failing_since, failure_streak from webhook_endpoints where id = $1';
const SQL_AUDIT =
  'insert into audit_log (id, at, actor_id, actor_role, tenant_id, action, target) values ($1, $2, $3, $4, $5, $6, $7)';

const SQL_DISABLE_ENDPOINT = `
  update webhook_endpoints set enabled = 0, disabled_reason = $2, updated_at = $3 where id = $1`;
const SQL_FAIL_PENDING = `
  update webhook_deliveries set state = 'failed', last_error = 'the endpoint was disabled', completed_at = $2,
    lease_until = null
  where endpoint_id = $1 and state = 'pending'`;

const q = (name: string, text: string, values: unknown[]): pg.QueryConfig => ({ name, text, values });

/** SQLSTATE 23505, the code isUniqueViolation (errors.ts) recognises. */
function duplicateSignal(id: string): Error {
  return Object.assign(new Error(`duplicate key value violates unique constraint "signals_pkey" (${id})`), {
    code: '23505',
  });
}

type ClaimRow = WebhookDeliveryTable & {
  signal: SignalTable | null;
  endpoint: DeliveryEndpointRow | null;
  claim_turn: unknown;
  claim_due: unknown;
};

export class PostgresDeliveryQueue implements DeliveryQueue {
  private readonly db: Db;
  private readonly pool: pg.Pool;
  /** The watcher's callback (`watch`), also called when a claim skipped an endpoint another replica held. */
  private onWork: (() => void) | undefined;
  private lookAgain: NodeJS.Timeout | undefined;
  /** Wakes the worker when a rate-limited endpoint may send again. */
  private readonly rateWake = new RateWakeups();

  private lookAgainSoon(): void {
    if (this.lookAgain || !this.onWork) return;
    this.lookAgain = setTimeout(() => {
      this.lookAgain = undefined;
      this.onWork?.();
    }, LOOK_AGAIN_MS);
    this.lookAgain.unref();
  }

  /** This process's name on its leases (`leased_by`), new at every start: a dead predecessor's leases count as another's. */
  readonly holder = randomUUID();

  constructor(db: Db) {
    this.db = db;
    this.pool = pgHotPool(db);
  }

  /**
   * Claims and outcomes commit without waiting for the WAL flush (synchronous_commit off for
   * the transaction): their loss in a database crash costs at most a duplicate attempt (the
   * delivery is leased or pending again), never a delivery. The outbox's statement commits
   * durably: its 201 promises the signal. The pool's connections pipeline (db/postgres.ts), so
   * `begin` goes out with the transaction's first statement and `commit` with its last
   * (Transaction.queryAndCommit): a claim or a batch of outcomes is two round trips.
   */
  private async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const tx = new Transaction(client);
    try {
      const result = await fn(tx);
      if (!tx.committed) await tx.commit();
      return result;
    } catch (error) {
      await client.query('rollback').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async enqueue(entries: readonly OutboxEntry[]): Promise<EnqueueResult[]> {
    try {
      return await insertBatch(this.pool, entries, this.holder);
    } catch {
      // Something other than a duplicate id failed the batch (a foreign key, a check): each
      // entry again in a statement of its own, so it fails alone.
      const results: EnqueueResult[] = [];
      for (const entry of entries) {
        try {
          results.push(...(await insertBatch(this.pool, [entry], this.holder)));
        } catch (error) {
          results.push({ ok: false, error });
        }
      }
      return results;
    }
  }

  async claim({ now, leaseMs, limit, perEndpoint, busy }: ClaimRequest): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const nowIso = now.toISOString();
    const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
    return this.transaction(async (tx) => {
      const due = await tx.query<{ id: string; taken: boolean; rate_limit: number | null }>(
        q('guard_lock_due_endpoints', SQL_LOCK_DUE_ENDPOINTS, [nowIso, limit, now.getTime()]),
      );
      // An endpoint another replica was claiming from just now may still have work after its
      // claim: look again shortly rather than at the next poll.
      if (due.rows.some((r) => !r.taken)) this.lookAgainSoon();
      const taken = due.rows.filter((r) => r.taken);
      const ids = taken.map((r) => r.id);
      if (ids.length === 0) return [];
      // Rate limits: how many each limited endpoint may start now, from its bucket as the last
      // claim (of any replica) left it; the lock above keeps other claims off it meanwhile.
      const nowMs = now.getTime();
      const limited = new Map(taken.filter((r) => r.rate_limit !== null).map((r) => [r.id, r.rate_limit as number]));
      const tats = new Map<string, number>();
      if (limited.size > 0) {
        const found = await tx.query<{ endpoint_id: string; tat_ms: number }>(
          q('guard_rates', SQL_RATES, [[...limited.keys()]]),
        );
        for (const r of found.rows) tats.set(r.endpoint_id, Number(r.tat_ms));
      }
      const allow = ids.map((id) => {
        const rate = limited.get(id);
        return rate === undefined ? perEndpoint : Math.min(perEndpoint, allowance(rate, tats.get(id) ?? 0, nowMs));
      });
      // Without rate limits to save, the claim's statement goes out with the commit.
      const claim = limited.size > 0 ? tx.query.bind(tx) : tx.queryAndCommit.bind(tx);
      const { rows } = await claim<ClaimRow>(
        q('guard_claim', SQL_CLAIM, [
          ids,
          ids.map((id) => busy.get(id) ?? 0),
          perEndpoint,
          nowIso,
          limit,
          leaseUntil,
          this.holder,
          allow,
        ]),
      );
      if (limited.size > 0) await this.saveRates(tx, limited, tats, rows, nowMs, allow, ids);
      // Claims of one endpoint share one endpoint object (the worker caches by it), which only
      // the endpoint's first row, its first turn, carries; the rows come in turn order.
      const endpoints = new Map<string, DeliveryEndpointRow | undefined>();
      return rows.map(({ signal, endpoint, claim_turn: _turn, claim_due: _due, ...delivery }) => {
        if (!endpoints.has(delivery.endpoint_id)) endpoints.set(delivery.endpoint_id, endpoint ?? undefined);
        return { delivery, signal: signal ?? undefined, endpoint: endpoints.get(delivery.endpoint_id) };
      });
    });
  }

  /**
   * Advances the buckets of the limited endpoints that started deliveries, and looks again
   * when the first of those held back may go.
   */
  private async saveRates(
    tx: Transaction,
    limited: Map<string, number>,
    tats: Map<string, number>,
    rows: readonly { endpoint_id: string }[],
    nowMs: number,
    allow: number[],
    ids: string[],
  ): Promise<void> {
    const started = new Map<string, number>();
    for (const r of rows) started.set(r.endpoint_id, (started.get(r.endpoint_id) ?? 0) + 1);
    const save = { id: [] as string[], tat: [] as number[] };
    for (const [id, rate] of limited) {
      const n = started.get(id) ?? 0;
      const tat = n > 0 ? Math.ceil(advance(rate, tats.get(id) ?? 0, nowMs, n)) : (tats.get(id) ?? 0);
      if (n > 0) {
        save.id.push(id);
        save.tat.push(tat);
      }
      // It sent, or its limit held it back (it may have more due): until its next moment the
      // claim leaves it out, so look again then.
      if (n > 0 || n >= allow[ids.indexOf(id)]) this.rateWake.at(nextAllowedMs(rate, tat), nowMs);
    }
    if (save.id.length > 0) await tx.query(q('guard_save_rates', SQL_SAVE_RATES, [save.id, save.tat]));
  }

  async releaseAllLeases(): Promise<number> {
    const r = await this.pool.query(
      `update webhook_deliveries set state = 'pending', lease_until = null, leased_by = null where state = 'delivering'`,
    );
    return r.rowCount ?? 0;
  }

  async recordOutcomes(outcomes: readonly AttemptOutcome[], policy: OutcomePolicy): Promise<RecordedOutcomes> {
    if (outcomes.length === 0) return { decisions: [], disabled: new Map() };
    return this.transaction(async (tx) => {
      const endpointIds = [...new Set(outcomes.map((o) => o.delivery.endpoint_id))].sort();
      const found = await tx.query<{
        id: string;
        enabled: number | null;
        failing_since: string | null;
        failure_streak: number | null;
        failing_alerted: number | null;
        is_endpoint: boolean;
      }>(q('guard_lock_health', SQL_LOCK_HEALTH, [endpointIds, outcomes.map((o) => o.delivery.id)]));
      const health = new Map<string, EndpointHealth>();
      const existing = new Set<string>();
      for (const r of found.rows)
        if (r.is_endpoint)
          health.set(r.id, {
            enabled: r.enabled === 1,
            failingSince: r.failing_since,
            failureStreak: r.failure_streak ?? 0,
            alertedPercent: r.failing_alerted ?? 0,
          });
        else existing.add(r.id);
      const plan = planOutcomes(outcomes, { health, existing }, policy);
      const d = {
        id: [] as string[],
        kind: [] as string[],
        state: [] as string[],
        attempts: [] as (number | null)[],
        lastStatus: [] as (number | null)[],
        lastError: [] as (string | null)[],
        nextAttemptAt: [] as (string | null)[],
        completedAt: [] as (string | null)[],
      };
      const a = {
        id: [] as string[],
        deliveryId: [] as string[],
        tenantId: [] as string[],
        attempt: [] as number[],
        startedAt: [] as string[],
        durationMs: [] as number[],
        status: [] as (number | null)[],
        error: [] as (string | null)[],
        excerpt: [] as (string | null)[],
        signature: [] as (string | null)[],
        traceparent: [] as (string | null)[],
        signal: [] as string[],
        standardSignature: [] as (string | null)[],
        responseHeaders: [] as (string | null)[],
      };
      for (const { outcome: o, update: u, attempt: at } of plan.deliveries) {
        d.id.push(o.delivery.id);
        d.kind.push(u.kind);
        d.state.push(u.kind === 'succeeded' ? 'succeeded' : u.kind === 'retry' ? 'pending' : 'failed');
        d.attempts.push(u.kind === 'abandoned' ? null : u.attempts);
        d.lastStatus.push(u.kind === 'abandoned' ? null : u.lastStatus);
        d.lastError.push(u.kind === 'succeeded' ? null : u.lastError);
        d.nextAttemptAt.push(u.kind === 'retry' ? u.nextAttemptAt : null);
        d.completedAt.push(u.kind === 'retry' ? null : u.completedAt);
        if (at) {
          a.id.push(timeOrderedUuid(Date.parse(at.startedAt)));
          a.deliveryId.push(o.delivery.id);
          a.tenantId.push(o.delivery.tenant_id);
          a.attempt.push(at.attempt);
          a.startedAt.push(at.startedAt);
          a.durationMs.push(at.durationMs);
          a.status.push(at.status);
          a.error.push(at.error);
          a.excerpt.push(at.responseExcerpt);
          a.signature.push(o.sent?.signature ?? null);
          a.signal.push(o.delivery.signal_id);
          a.traceparent.push(o.sent?.traceparent ?? null);
          a.standardSignature.push(o.sent?.standardSignature ?? null);
          a.responseHeaders.push(at.responseHeaders ?? null);
        }
      }
      if (d.id.length > 0) {
        // With nothing to do after it (as a rule), the statement goes out with the commit.
        const last = plan.disable.size === 0 && plan.announcements.length === 0;
        await (last ? tx.queryAndCommit.bind(tx) : tx.query.bind(tx))(
          q('guard_write_outcomes', SQL_WRITE_OUTCOMES, [
            d.id,
            d.kind,
            d.state,
            d.attempts,
            d.lastStatus,
            d.lastError,
            d.nextAttemptAt,
            d.completedAt,
            a.id,
            a.deliveryId,
            a.tenantId,
            a.attempt,
            a.startedAt,
            a.durationMs,
            a.status,
            a.error,
            a.excerpt,
            ...streakColumns(plan.health),
            ...statsColumns(plan.counts),
            a.signature,
            a.traceparent,
            a.signal,
            a.standardSignature,
            a.responseHeaders,
          ]),
        );
      }
      for (const [endpointId, { reason, at }] of plan.disable) {
        await tx.query(q('guard_disable_endpoint', SQL_DISABLE_ENDPOINT, [endpointId, reason, at]));
        await tx.query(q('guard_fail_pending', SQL_FAIL_PENDING, [endpointId, at]));
      }
      // Announced after the disabling, so a disabled endpoint is not among the receivers.
      for (const an of plan.announcements) {
        const e = (await tx.query<EventEndpoint>(q('guard_event_endpoint', SQL_EVENT_ENDPOINT, [an.endpointId])))
          .rows[0];
        if (!e) continue;
        const { events, audit } = announce(e, an);
        if (events.length > 0)
          await insertBatch(
            tx,
            events.map((signal) => ({ signal, excludeEndpointId: e.id })),
            this.holder,
          );
        for (const row of audit)
          await tx.query(
            q('guard_audit', SQL_AUDIT, [
              row.id,
              row.at,
              row.actor_id,
              row.actor_role,
              row.tenant_id,
              row.action,
              row.target,
            ]),
          );
      }
      return recordedOf(plan);
    });
  }

  /**
   * LISTENs on a connection of its own for the NOTIFY of every enqueue, and calls `onWork`
   * for each (and once after every (re)connection, for what was committed meanwhile). A lost
   * connection is reopened with backoff; the worker's slow poll covers the gap.
   */
  async watch(onWork: () => void): Promise<() => Promise<void>> {
    this.onWork = onWork;
    this.rateWake.setWake(onWork);
    let stopped = false;
    let client: pg.Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    let backoffMs = 500;
    const connect = async (): Promise<void> => {
      const c = pgListenClient(this.db);
      client = c;
      // Its own NOTIFYs are no news: the outbox's caller woke this process's worker already.
      c.on('notification', (n) => {
        if (n.payload !== this.holder) onWork();
      });
      c.on('error', () => reconnect(c));
      c.on('end', () => reconnect(c));
      await c.connect();
      await c.query(`listen ${WORK_CHANNEL}`);
      backoffMs = 500;
      onWork();
    };
    const reconnect = (c: pg.Client) => {
      if (stopped || client !== c || retry) return;
      client = undefined;
      c.end().catch(() => {});
      retry = setTimeout(() => {
        retry = undefined;
        if (!stopped) connect().catch(() => reconnect(client ?? c));
      }, backoffMs);
      retry.unref();
      backoffMs = Math.min(backoffMs * 2, 30_000);
    };
    await connect();
    return async () => {
      stopped = true;
      this.onWork = undefined;
      if (this.lookAgain) clearTimeout(this.lookAgain);
      this.rateWake.setWake(undefined);
      if (retry) clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    };
  }
}

/**
 * A transaction on a pipelining connection: `begin` goes out with the first statement and
 * `commit` (queryAndCommit) with the last, each group in one write to the socket (pg writes
 * every query as it is submitted; a write over TCP costs more than the bytes). A statement that
 * fails turns the commit sent behind it into a rollback (PostgreSQL's answer to COMMIT in a
 * failed transaction).
 */
class Transaction {
  private readonly client: pg.PoolClient;
  private begun: Promise<unknown> | undefined;
  committed = false;

  constructor(client: pg.PoolClient) {
    this.client = client;
  }

  async query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    return (await this.send<R>(config, false))[1];
  }

  async queryAndCommit<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    const [, result] = await this.send<R>(config, true);
    this.committed = true;
    return result;
  }

  /** Commits what was sent (nothing to do if nothing was). */
  async commit(): Promise<void> {
    if (this.begun) await Promise.all([this.begun, this.client.query('commit')]);
    this.committed = true;
  }

  private send<R extends pg.QueryResultRow>(config: pg.QueryConfig, commit: boolean) {
    const stream = this.client.connection.stream;
    stream.cork();
    try {
      this.begun ??= this.client.query('begin; set local synchronous_commit = off');
      return Promise.all([this.begun, this.client.query<R>(config), commit ? this.client.query('commit') : undefined]);
    } finally {
      stream.uncork();
    }
  }
}

/** What a statement runs on: the pool (the outbox's statement commits on its own), or a transaction. */
type Queryable = { query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> };

/** One group commit (SQL_ENQUEUE); entries with a duplicate id fail alone. */
async function insertBatch(db: Queryable, entries: readonly OutboxEntry[], holder: string): Promise<EnqueueResult[]> {
  // An id twice in one batch: the first is written, the later ones fail as duplicates. An
  // agent's idempotency key twice: the later ones answer with the first.
  const first = new Map<string, number>();
  const firstWithKey = new Map<string, number>();
  const sameKeyAs = new Map<number, number>();
  const sent: OutboxEntry[] = [];
  for (const [i, e] of entries.entries()) {
    if (first.has(e.signal.id)) continue;
    const key = idempotencyKeyOf(e.signal);
    if (key !== undefined) {
      const earlier = firstWithKey.get(key);
      if (earlier !== undefined) {
        sameKeyAs.set(i, earlier);
        continue;
      }
      firstWithKey.set(key, i);
    }
    first.set(e.signal.id, i);
    sent.push(e);
  }
  const col = <K extends keyof SignalTable>(k: K) => sent.map((e) => e.signal[k]);
  const { rows } = await db.query<{ signal_id: string; delivery_id: string | null }>(
    q('guard_enqueue', SQL_ENQUEUE, [
      col('id'),
      col('tenant_id'),
      col('agent_id'),
      col('server_id'),
      col('server_name'),
      col('signal_type'),
      col('severity'),
      col('description'),
      col('identity_id'),
      col('identity_name'),
      col('environment'),
      col('created_at'),
      col('received_at'),
      col('is_test'),
      sent.map((e) => e.onlyEndpointId ?? null),
      col('event_type'),
      col('event_data'),
      sent.map((e) => e.excludeEndpointId ?? null),
      sent.map((e) => eventBitOf(e.signal)),
      sent.map((e) => e.signal.traceparent ?? null),
      sent.map((e) => e.signal.idempotency_key ?? null),
      // Ids are time-ordered by the signal's receipt: partitions and retention go by id.
      sent.map((e) => timeOrderedUuid(Date.parse(e.signal.received_at))),
      holder,
    ]),
  );
  const bySignal = new Map<string, string[]>();
  for (const r of rows) {
    const list = bySignal.get(r.signal_id) ?? [];
    bySignal.set(r.signal_id, list);
    if (r.delivery_id !== null) list.push(r.delivery_id);
  }
  // Entries with a key that were not written: the key's signal (committed by another request,
  // perhaps on another replica, before this one or while this insert waited on it) answers.
  const existing = new Map<string, { signalId: string; deliveries: number }>();
  const unwritten = sent.filter((e) => !bySignal.has(e.signal.id) && idempotencyKeyOf(e.signal) !== undefined);
  if (unwritten.length > 0) {
    const found = await db.query<{ id: string; agent_id: string; idempotency_key: string; deliveries: number }>(
      q('guard_signals_by_key', SQL_SIGNALS_BY_KEY, [
        unwritten.map((e) => e.signal.tenant_id),
        unwritten.map((e) => e.signal.agent_id),
        unwritten.map((e) => e.signal.idempotency_key),
      ]),
    );
    for (const r of found.rows)
      existing.set(`${r.agent_id}\n${r.idempotency_key}`, { signalId: r.id, deliveries: Number(r.deliveries) });
  }
  const results: EnqueueResult[] = entries.map((e, i) => {
    const deliveryIds = first.get(e.signal.id) === i ? bySignal.get(e.signal.id) : undefined;
    if (deliveryIds) return { ok: true, deliveryIds };
    if (sameKeyAs.has(i)) return { ok: true, deliveryIds: [] }; // answered below, like the earlier one
    const key = idempotencyKeyOf(e.signal);
    const found = key === undefined ? undefined : existing.get(key);
    if (found) return { ok: true, deliveryIds: [], existing: found };
    return { ok: false, error: duplicateSignal(e.signal.id) };
  });
  for (const [i, earlier] of sameKeyAs) results[i] = answerLikeEarlier(results[earlier], entries[earlier].signal.id);
  return results;
}

/** The streak columns ($18–$21) of the endpoints whose health the batch changed. */
function streakColumns(health: Map<string, EndpointHealth>) {
  const rows = [...health];
  return [
    rows.map(([id]) => id),
    rows.map(([, h]) => h.failingSince),
    rows.map(([, h]) => h.failureStreak),
    rows.map(([, h]) => h.alertedPercent),
  ];
}

/** The attempt counts ($22–$25) to add per endpoint and hour. */
function statsColumns(stats: AttemptCounts) {
  const rows = [...stats.values()];
  return [
    rows.map((c) => c.endpointId),
    rows.map((c) => c.hour),
    rows.map((c) => c.succeeded),
    rows.map((c) => c.failed),
  ];
}
