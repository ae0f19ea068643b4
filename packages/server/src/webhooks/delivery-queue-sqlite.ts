// The delivery queue on the embedded SQLite database (node:sqlite). These are the hot paths
// of ingest and delivery, so they run prepared SQL inside `BEGIN IMMEDIATE` on the raw
// connection (db/index.ts writeTransaction) instead of building queries with Kysely, which
// cost more than running them (docs/decisions/0003). One process owns the database, so
// nothing else claims meanwhile; the claim and the lease are still written as a lease, so a
// crashed attempt is picked up once its lease expires. A rate-limited endpoint's bucket
// (rate-limit.ts) is a row of webhook_endpoint_rates, as on PostgreSQL.

import type { SignalTable, WebhookDeliveryTable } from '../db/index.ts';
import { type Db, type Statements, writeTransaction } from '../db/index.ts';
import { timeOrderedUuid } from '../kernel/ids.ts';
import type {
  ClaimedDelivery,
  ClaimRequest,
  DeliveryEndpointRow,
  DeliveryQueue,
  EnqueueResult,
  ExistingSignal,
  OutboxEntry,
  OutcomePolicy,
  RecordedAndClaimed,
  RecordedOutcomes,
} from './delivery-queue.ts';
import { announce, type EventEndpoint, type SystemAuditRow } from './operational-events.ts';
import { type OutcomeReads, planOutcomes, recordedOf } from './outcome-plan.ts';
import type { AttemptOutcome, AttemptRecord, DeliveryUpdate, EndpointHealth } from './outcome-policy.ts';
import { advance, allowance, nextAllowedMs, RateWakeups } from './rate-limit.ts';
import { EVENT_BITS, eventBitOf } from './subscriptions.ts';

/**
 * Not an endpoint its rate limit holds back now (rate-limit.ts: GCRA allows one iff its
 * `tat` ≤ now + (burst − 1) × interval; `?` is now in Unix ms): so that throttled endpoints with
 * old backlogs never fill a claim that other endpoints' deliveries wait for.
 */
const RATE_ALLOWS_NOW = `(e.rate_limit is null or coalesce(
      (select r.tat_ms from webhook_endpoint_rates r where r.endpoint_id = e.id), 0)
      <= ? + (max(1, cast(e.rate_limit / 10 as integer)) - 1) * 1000.0 / e.rate_limit + 1)`;
/**
 * The endpoints with due deliveries (not held back by their rate limit), each with its oldest
 * due time. Only endpoints with a pending delivery are looked at, found by skipping through the
 * pending index one endpoint at a time (a recursive CTE), then one seek each for its oldest due
 * one: a claim's cost follows the endpoints with work, not the number configured.
 */
export const SQL_DUE_ENDPOINTS = `
  with recursive pending(id) as (
    select (select x.endpoint_id from webhook_deliveries x where x.state = 'pending'
      order by x.endpoint_id limit 1)
    union all
    select (select x.endpoint_id from webhook_deliveries x where x.state = 'pending' and x.endpoint_id > p.id
      order by x.endpoint_id limit 1)
    from pending p where p.id is not null
  )
  select e.id, e.rate_limit, (
      select x.next_attempt_at from webhook_deliveries x
      where x.endpoint_id = e.id and x.state = 'pending' and x.next_attempt_at <= ?
      order by x.next_attempt_at limit 1) as oldest
  from pending w join webhook_endpoints e on e.id = w.id
  where oldest is not null and ${RATE_ALLOWS_NOW}`;
/** One endpoint's oldest due deliveries. */
const SQL_DUE_OF_ENDPOINT = `
  select id, next_attempt_at from webhook_deliveries
  where endpoint_id = ? and state = 'pending' and next_attempt_at <= ?
  order by next_attempt_at limit ?`;
const SQL_RATE = 'select tat_ms from webhook_endpoint_rates where endpoint_id = ?';
const SQL_SAVE_RATE = `
  insert into webhook_endpoint_rates (endpoint_id, tat_ms) values (?, ?)
  on conflict (endpoint_id) do update set tat_ms = excluded.tat_ms`;
/** Deliveries whose lease expired: a crashed or lost attempt. */
const SQL_EXPIRED = `
  select d.id, d.endpoint_id, e.rate_limit from webhook_deliveries d left join webhook_endpoints e on e.id = d.endpoint_id
  where d.state = 'delivering' and d.lease_until < ? limit ?`;
/** When the next lease runs out (the leased index's first entry). */
const SQL_FIRST_LEASE_END = `select min(lease_until) as lease_until from webhook_deliveries where state = 'delivering'`;
/**
 * Takes the lease on the rows (a JSON array of ids, each found by its primary key) that are
 * still due. One statement for a claim's rows: with a statement per row, leasing and reading
 * the signals cost ~70 % more (34.6 against 20.5 µs per delivery, side by side).
 */
const SQL_LEASE = `
  update webhook_deliveries set state = 'delivering', lease_until = ?
  where id in (select value from json_each(?))
    and ((state = 'pending' and next_attempt_at <= ?) or (state = 'delivering' and lease_until < ?))
  returning *`;
const SQL_ENDPOINT = `
  select id, updated_at, url, enabled, secret_sealed, headers, previous_secret_sealed, previous_secret_expires_at,
    rotation_proof_signal_id, tls_client_certificate, tls_client_key_sealed, tls_ca_certificates, auth_sealed
  from webhook_endpoints where id = ?`;
/** The signals of the rows leased (a JSON array of ids). */
const SQL_SIGNALS = 'select * from signals where id in (select value from json_each(?))';
/** A signal's endpoints: subscribed to signal_created, its severity and type within their filters. */
const SQL_SIGNAL_ENDPOINTS = `
  select id from webhook_endpoints
  where tenant_id = ? and enabled = 1 and (event_mask & ${EVENT_BITS.signal_created}) <> 0 and min_severity <= ?
    and (signal_types is null or exists (select 1 from json_each(signal_types) t where t.value = ?))
  order by id`;
/** An operational event's endpoints: subscribed to its type, other than the one it is about. */
const SQL_EVENT_ENDPOINTS = `
  select id from webhook_endpoints
  where tenant_id = ? and enabled = 1 and (event_mask & ?) <> 0 and id is not ?
  order by id`;
const SQL_HEALTH = 'select enabled, failing_since, failure_streak, failing_alerted from webhook_endpoints where id = ?';
const SQL_EVENT_ENDPOINT =
  'select id, tenant_id, name, url, failing_since, failure_streak from webhook_endpoints where id = ?';
/** Which of the deliveries (a JSON array of ids) still exist. */
const SQL_DELIVERIES_EXISTING = 'select id from webhook_deliveries where id in (select value from json_each(?))';

export class SqliteDeliveryQueue implements DeliveryQueue {
  private readonly db: Db;
  /** Wakes the worker when a rate-limited endpoint may send again. */
  private readonly rateWake = new RateWakeups();
  /**
   * No lease runs out before this (Unix ms, on the claims' clock): until then a claim does not
   * look for run-out leases. One process owns the database, so every lease is written here;
   * a claim looked for them every time, its dearest statement for what is almost never there
   * (~130 µs a claim in bench:peers, issue 25). -Infinity: look (the first claim, the one after
   * a look that found any, and after a claim whose transaction failed: the leases its outcomes
   * ended are back).
   */
  private firstLeaseEndMs = Number.NEGATIVE_INFINITY;

  constructor(db: Db) {
    this.db = db;
  }

  /**
   * All entries in one transaction without a savepoint each: a savepoint's journal of a
   * signal's pages outgrows SQLite's in-memory limit (64 KiB) and becomes a temp file, made,
   * written and deleted on the event loop in every commit (a stall of 100 ms and more in the
   * kernel, freeing its page cache, beside a busy neighbour: bench:peers, issue 25). When an
   * entry fails the batch (a duplicate id, a foreign key), each entry is written again in a
   * transaction of its own, so that it fails alone, as on PostgreSQL.
   */
  async enqueue(entries: readonly OutboxEntry[]): Promise<EnqueueResult[]> {
    try {
      return await writeTransaction(this.db, (sql) => {
        const subscribers = subscribersIn(sql);
        return entries.map((entry) => enqueueOne(sql, entry, subscribers));
      });
    } catch {
      const results: EnqueueResult[] = [];
      for (const entry of entries) {
        try {
          results.push(await writeTransaction(this.db, (sql) => enqueueOne(sql, entry, subscribersIn(sql))));
        } catch (error) {
          results.push({ ok: false, error });
        }
      }
      return results;
    }
  }

  claim(request: ClaimRequest): Promise<ClaimedDelivery[]> {
    return this.rolledBackLooks(writeTransaction(this.db, (sql) => this.claimIn(sql, request)));
  }

  /**
   * The outcomes, then the claim, in one transaction: one commit where there were two, and
   * the pages both touch (the deliveries just finished and those next in line, the lease
   * index) written to the WAL once.
   */
  recordOutcomesAndClaim(
    outcomes: readonly AttemptOutcome[],
    policy: OutcomePolicy,
    request: ClaimRequest,
  ): Promise<RecordedAndClaimed> {
    return this.rolledBackLooks(
      writeTransaction(this.db, (sql) => ({
        recorded: recordOutcomesIn(sql, outcomes, policy),
        claimed: this.claimIn(sql, request),
      })),
    );
  }

  /** A claim's transaction failed: what it read of the leases was rolled back, so the next claim looks. */
  private rolledBackLooks<T>(claim: Promise<T>): Promise<T> {
    return claim.catch((error: unknown) => {
      this.firstLeaseEndMs = Number.NEGATIVE_INFINITY;
      throw error;
    });
  }

  private claimIn(sql: Statements, { now, leaseMs, limit, perEndpoint, busy }: ClaimRequest): ClaimedDelivery[] {
    const nowIso = now.toISOString();
    const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
    const nowMs = now.getTime();
    const candidates = [
      ...this.expiredLeases(sql, nowIso, nowMs, limit),
      ...dueCandidates(sql, nowIso, nowMs, limit, perEndpoint, busy),
    ];
    const taking = new Map<string, number>();
    const chosen: string[] = [];
    // Rate-limited endpoints: their bucket (GCRA's theoretical arrival time, Unix ms, as the
    // last claim left it; reset when the limit is changed), their rate, and how many may start now.
    const allowed = new Map<string, { rate: number; tat: number; n: number }>();
    let limitedUntil = Number.POSITIVE_INFINITY;
    for (const c of candidates) {
      const taken = taking.get(c.endpoint_id) ?? 0;
      if ((busy.get(c.endpoint_id) ?? 0) + taken >= perEndpoint) continue;
      if (c.rate_limit !== null) {
        let a = allowed.get(c.endpoint_id);
        if (!a) {
          const tat = Number(sql.get<{ tat_ms: number }>(SQL_RATE, c.endpoint_id)?.tat_ms ?? 0);
          a = { rate: c.rate_limit, tat, n: allowance(c.rate_limit, tat, nowMs) };
          allowed.set(c.endpoint_id, a);
        }
        if (taken >= a.n) {
          // It waits; the worker is woken when the next one may go.
          const tat = advance(a.rate, a.tat, nowMs, taken);
          limitedUntil = Math.min(limitedUntil, nextAllowedMs(a.rate, tat));
          continue;
        }
      }
      chosen.push(c.id);
      taking.set(c.endpoint_id, taken + 1);
      if (chosen.length >= limit) break;
    }
    const claimed = chosen.length === 0 ? [] : leaseRows(sql, chosen, leaseUntil, nowIso);
    if (claimed.length > 0) this.firstLeaseEndMs = Math.min(this.firstLeaseEndMs, nowMs + leaseMs);
    // What the rate limits spend is what was leased (a row no longer due is not).
    const leased = new Map<string, number>();
    for (const { delivery } of claimed) leased.set(delivery.endpoint_id, (leased.get(delivery.endpoint_id) ?? 0) + 1);
    for (const [endpointId, { rate, tat }] of allowed) {
      const n = leased.get(endpointId) ?? 0;
      if (n === 0) continue;
      const next = Math.ceil(advance(rate, tat, nowMs, n));
      sql.run(SQL_SAVE_RATE, endpointId, next);
      // Until then the claim leaves it out: look again when it may send (it may have more due).
      this.rateWake.at(nextAllowedMs(rate, next), nowMs);
    }
    if (limitedUntil !== Number.POSITIVE_INFINITY) this.rateWake.at(limitedUntil, nowMs);
    return claimed;
  }

  /** Deliveries whose lease ran out, looked for only once one may have. */
  private expiredLeases(sql: Statements, nowIso: string, nowMs: number, limit: number): Candidate[] {
    if (nowMs < this.firstLeaseEndMs) return [];
    const expired = sql.all<Candidate>(SQL_EXPIRED, nowIso, limit);
    // Those found are leased by this claim or stay run out (its limits): the next claim looks again.
    if (expired.length > 0) this.firstLeaseEndMs = Number.NEGATIVE_INFINITY;
    else {
      const first = sql.get<{ lease_until: string | null }>(SQL_FIRST_LEASE_END)?.lease_until;
      this.firstLeaseEndMs = first ? Date.parse(first) : Number.POSITIVE_INFINITY;
    }
    return expired;
  }

  /**
   * One process owns the database: its own wake() is all the news there is. The callback is
   * kept for the rate limit's wake-ups (a limited endpoint's next free moment).
   */
  async watch(onWork: () => void): Promise<() => Promise<void>> {
    this.rateWake.setWake(onWork);
    return async () => this.rateWake.setWake(undefined);
  }

  releaseAllLeases(): Promise<number> {
    return writeTransaction(this.db, (sql) =>
      sql.run(`update webhook_deliveries set state = 'pending', lease_until = null where state = 'delivering'`),
    );
  }

  recordOutcomes(outcomes: readonly AttemptOutcome[], policy: OutcomePolicy): Promise<RecordedOutcomes> {
    return writeTransaction(this.db, (sql) => recordOutcomesIn(sql, outcomes, policy));
  }
}

function recordOutcomesIn(
  sql: Statements,
  outcomes: readonly AttemptOutcome[],
  policy: OutcomePolicy,
): RecordedOutcomes {
  const plan = planOutcomes(outcomes, readForOutcomes(sql, outcomes), policy);
  for (const { outcome, update, attempt } of plan.deliveries) {
    updateDelivery(sql, outcome.delivery.id, update);
    if (attempt) insertAttempt(sql, outcome, attempt);
  }
  for (const [endpointId, h] of plan.health)
    sql.run(
      'update webhook_endpoints set failing_since = ?, failure_streak = ?, failing_alerted = ? where id = ?',
      h.failingSince,
      h.failureStreak,
      h.alertedPercent,
      endpointId,
    );
  for (const c of plan.counts.values())
    sql.run(
      `insert into webhook_endpoint_stats (endpoint_id, hour, succeeded, failed) values (?, ?, ?, ?)
         on conflict (endpoint_id, hour) do update set succeeded = succeeded + excluded.succeeded,
           failed = failed + excluded.failed`,
      c.endpointId,
      c.hour,
      c.succeeded,
      c.failed,
    );
  for (const [endpointId, { reason, at }] of plan.disable) {
    sql.run(
      'update webhook_endpoints set enabled = 0, disabled_reason = ?, updated_at = ? where id = ?',
      reason,
      at,
      endpointId,
    );
    sql.run(
      `update webhook_deliveries set state = 'failed', last_error = 'the endpoint was disabled',
           completed_at = ?, lease_until = null
         where endpoint_id = ? and state = 'pending'`,
      at,
      endpointId,
    );
  }
  // Announced after the disabling, so a disabled endpoint is not among the receivers.
  for (const a of plan.announcements) {
    const e = sql.get<EventEndpoint>(SQL_EVENT_ENDPOINT, a.endpointId);
    if (!e) continue;
    const { events, audit } = announce(e, a);
    for (const event of events) insertSignal(sql, event, undefined, e.id, subscribersIn(sql));
    for (const row of audit) insertAudit(sql, row);
  }
  return recordedOf(plan);
}

/**
 * One entry of the outbox. One process writes, one transaction at a time: a signal that holds
 * its key (committed, or written by an earlier entry of this batch) is found before the insert.
 */
function enqueueOne(
  sql: Statements,
  { signal, onlyEndpointId, excludeEndpointId }: OutboxEntry,
  subscribers: Subscribers,
): EnqueueResult {
  const existing = signalWithKey(sql, signal);
  if (existing) return { ok: true, deliveryIds: [], existing };
  return { ok: true, deliveryIds: insertSignal(sql, signal, onlyEndpointId, excludeEndpointId, subscribers) };
}

/** The endpoints a `signal_created` signal goes to (SQL_SIGNAL_ENDPOINTS). */
type Subscribers = (s: SignalTable) => { id: string }[];

/**
 * Subscribers read once per tenant, severity and signal type in one transaction: a group
 * commit's signals mostly share them (one read where there were ~13, ~15 µs each), and no
 * other write can change an endpoint while the transaction holds the database.
 */
function subscribersIn(sql: Statements): Subscribers {
  const read = new Map<string, { id: string }[]>();
  return (s) => {
    const key = `${s.tenant_id}\0${s.severity}\0${s.signal_type}`;
    let endpoints = read.get(key);
    if (!endpoints) {
      endpoints = sql.all<{ id: string }>(SQL_SIGNAL_ENDPOINTS, s.tenant_id, s.severity, s.signal_type);
      read.set(key, endpoints);
    }
    return endpoints;
  };
}

type Candidate = { id: string; endpoint_id: string; rate_limit: number | null };

/**
 * Leases the rows chosen (those still due), in the order chosen, each with its signal and its
 * endpoint (read once per endpoint).
 */
function leaseRows(sql: Statements, ids: string[], leaseUntil: string, nowIso: string): ClaimedDelivery[] {
  const rows = sql.all<WebhookDeliveryTable>(SQL_LEASE, leaseUntil, JSON.stringify(ids), nowIso, nowIso);
  const byId = new Map(rows.map((d) => [d.id, d]));
  const signals = new Map(
    sql.all<SignalTable>(SQL_SIGNALS, JSON.stringify([...new Set(rows.map((d) => d.signal_id))])).map((s) => [s.id, s]),
  );
  const endpoints = new Map<string, DeliveryEndpointRow | undefined>();
  const claimed: ClaimedDelivery[] = [];
  for (const id of ids) {
    const delivery = byId.get(id);
    if (!delivery) continue;
    byId.delete(id); // each row once, were an id chosen twice
    if (!endpoints.has(delivery.endpoint_id))
      endpoints.set(delivery.endpoint_id, sql.get<DeliveryEndpointRow>(SQL_ENDPOINT, delivery.endpoint_id));
    claimed.push({ delivery, signal: signals.get(delivery.signal_id), endpoint: endpoints.get(delivery.endpoint_id) });
  }
  return claimed;
}

/**
 * Due deliveries to claim from, round-robin over the endpoints that have room (each one's
 * oldest, then each one's second oldest …; the endpoints in the order of their oldest), so that
 * one endpoint's backlog never fills a claim that other endpoints' deliveries wait for. Each
 * endpoint is read for no more than its free slots (per-endpoint limit less what is in flight)
 * and its share of 2 × limit candidates (the rest of `limit` covers those a rate limit holds back).
 * Per endpoint one indexed read: a single query with a window over all endpoints cost ~10× as
 * much for the few rows a claim takes (bench:peers, issue 25).
 */
function dueCandidates(
  sql: Statements,
  nowIso: string,
  nowMs: number,
  limit: number,
  perEndpoint: number,
  busy: ReadonlyMap<string, number>,
): Candidate[] {
  const endpoints = sql
    .all<{ id: string; rate_limit: number | null; oldest: string }>(SQL_DUE_ENDPOINTS, nowIso, nowMs)
    .filter((e) => (busy.get(e.id) ?? 0) < perEndpoint)
    .sort((a, b) => (a.oldest < b.oldest ? -1 : a.oldest > b.oldest ? 1 : 0));
  if (endpoints.length === 0) return [];
  const budget = limit * 2;
  const share = Math.max(1, Math.ceil(budget / endpoints.length));
  const read = endpoints.slice(0, budget).map((e) => ({
    e,
    rows: sql.all<{ id: string; next_attempt_at: string }>(
      SQL_DUE_OF_ENDPOINT,
      e.id,
      nowIso,
      Math.min(perEndpoint - (busy.get(e.id) ?? 0), share),
    ),
  }));
  const candidates: Candidate[] = [];
  for (let turn = 0; candidates.length < budget; turn++) {
    const round: { c: Candidate; at: string }[] = [];
    for (const { e, rows } of read) {
      const row = rows[turn];
      if (row) round.push({ c: { id: row.id, endpoint_id: e.id, rate_limit: e.rate_limit }, at: row.next_attempt_at });
    }
    if (round.length === 0) break;
    round.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    for (const { c } of round) candidates.push(c);
  }
  return candidates.slice(0, budget);
}

/** The rows a batch of outcomes is decided on: its endpoints' health and which of its deliveries still exist. */
function readForOutcomes(sql: Statements, outcomes: readonly AttemptOutcome[]): OutcomeReads {
  const health = new Map<string, EndpointHealth>();
  const existing = new Set<string>();
  const ids = JSON.stringify(outcomes.map((o) => o.delivery.id));
  for (const { id } of sql.all<{ id: string }>(SQL_DELIVERIES_EXISTING, ids)) existing.add(id);
  for (const o of outcomes) {
    const endpointId = o.delivery.endpoint_id;
    if (health.has(endpointId)) continue;
    const row = sql.get<{
      enabled: number;
      failing_since: string | null;
      failure_streak: number;
      failing_alerted: number;
    }>(SQL_HEALTH, endpointId);
    if (row)
      health.set(endpointId, {
        enabled: row.enabled === 1,
        failingSince: row.failing_since,
        failureStreak: row.failure_streak,
        alertedPercent: row.failing_alerted,
      });
  }
  return { health, existing };
}

function insertAudit(sql: Statements, a: SystemAuditRow): void {
  sql.run(
    'insert into audit_log (id, at, actor_id, actor_role, tenant_id, action, target) values (?, ?, ?, ?, ?, ?, ?)',
    a.id,
    a.at,
    a.actor_id,
    a.actor_role,
    a.tenant_id,
    a.action,
    a.target,
  );
}

/** The signal that holds this signal's agent's idempotency key, with its delivery count; undefined: none (or no key). */
function signalWithKey(sql: Statements, s: SignalTable): ExistingSignal | undefined {
  if (s.agent_id == null || s.idempotency_key == null) return undefined;
  const row = sql.get<{ id: string; deliveries: number }>(
    `select id, (select count(*) from webhook_deliveries d where d.signal_id = s.id and d.tenant_id = s.tenant_id)
       as deliveries
     from signals s where agent_id = ? and idempotency_key = ? and tenant_id = ?`,
    s.agent_id,
    s.idempotency_key,
    s.tenant_id,
  );
  return row && { signalId: row.id, deliveries: Number(row.deliveries) };
}

function insertSignal(
  sql: Statements,
  s: SignalTable,
  onlyEndpointId: string | undefined,
  excludeEndpointId: string | undefined,
  subscribers: Subscribers,
): string[] {
  sql.run(
    `insert into signals (id, tenant_id, agent_id, server_id, server_name, signal_type, severity, description,
       identity_id, identity_name, environment, created_at, received_at, is_test, event_type, event_data, traceparent,
       idempotency_key)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    s.id,
    s.tenant_id,
    s.agent_id,
    s.server_id,
    s.server_name,
    s.signal_type,
    s.severity,
    s.description,
    s.identity_id,
    s.identity_name,
    s.environment,
    s.created_at,
    s.received_at,
    s.is_test,
    s.event_type,
    s.event_data,
    s.traceparent ?? null,
    s.idempotency_key ?? null,
  );
  // Only the endpoints that subscribe (subscriptions.ts); a test event goes to the one named.
  const endpoints =
    onlyEndpointId !== undefined
      ? sql.all<{ id: string }>(
          'select id from webhook_endpoints where tenant_id = ? and enabled = 1 and id = ?',
          s.tenant_id,
          onlyEndpointId,
        )
      : s.event_type === 'signal_created' && s.is_test === 0
        ? subscribers(s)
        : sql.all<{ id: string }>(SQL_EVENT_ENDPOINTS, s.tenant_id, eventBitOf(s), excludeEndpointId ?? null);
  const ids: string[] = [];
  // Ids are time-ordered by the signal's receipt: retention deletes by id range (retention.ts).
  const receivedMs = Date.parse(s.received_at);
  for (const e of endpoints) {
    const id = timeOrderedUuid(receivedMs);
    sql.run(
      `insert into webhook_deliveries (id, tenant_id, signal_id, endpoint_id, state, attempts, next_attempt_at, created_at)
       values (?, ?, ?, ?, 'pending', 0, ?, ?)`,
      id,
      s.tenant_id,
      s.id,
      e.id,
      s.received_at,
      s.received_at,
    );
    ids.push(id);
  }
  return ids;
}

/** Writes the decided state of one delivery and releases its lease; returns the rows changed (0: it is gone). */
function updateDelivery(sql: Statements, id: string, u: DeliveryUpdate): number {
  switch (u.kind) {
    case 'succeeded':
      return sql.run(
        `update webhook_deliveries set state = 'succeeded', attempts = ?, lease_until = null, last_status = ?,
           last_error = null, completed_at = ? where id = ?`,
        u.attempts,
        u.lastStatus,
        u.completedAt,
        id,
      );
    case 'retry':
      return sql.run(
        `update webhook_deliveries set state = 'pending', attempts = ?, lease_until = null, last_status = ?,
           last_error = ?, next_attempt_at = ? where id = ?`,
        u.attempts,
        u.lastStatus,
        u.lastError,
        u.nextAttemptAt,
        id,
      );
    case 'failed':
      return sql.run(
        `update webhook_deliveries set state = 'failed', attempts = ?, lease_until = null, last_status = ?,
           last_error = ?, completed_at = ? where id = ?`,
        u.attempts,
        u.lastStatus,
        u.lastError,
        u.completedAt,
        id,
      );
    case 'abandoned':
      return sql.run(
        `update webhook_deliveries set state = 'failed', lease_until = null, last_error = ?, completed_at = ? where id = ?`,
        u.lastError,
        u.completedAt,
        id,
      );
  }
}

/** An attempt in flight while its signal's payload was erased keeps nothing of it (excerpt, signature). */
function insertAttempt(sql: Statements, o: AttemptOutcome, a: AttemptRecord): void {
  sql.run(
    `insert into webhook_attempts (id, delivery_id, tenant_id, attempt, started_at, duration_ms, status, error,
       response_excerpt, signature, traceparent, standard_signature, response_headers)
     select ?, ?, ?, ?, ?, ?, ?, ?, case when x.erased_at is null then ? end, case when x.erased_at is null then ? end, ?,
       case when x.erased_at is null then ? end, ?
     from (select (select erased_at from signals where id = ?) as erased_at) x`,
    timeOrderedUuid(Date.parse(a.startedAt)),
    o.delivery.id,
    o.delivery.tenant_id,
    a.attempt,
    a.startedAt,
    a.durationMs,
    a.status,
    a.error,
    a.responseExcerpt,
    o.sent?.signature ?? null,
    o.sent?.traceparent ?? null,
    o.sent?.standardSignature ?? null,
    a.responseHeaders ?? null,
    o.delivery.signal_id,
  );
}
