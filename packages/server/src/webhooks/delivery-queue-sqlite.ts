// The delivery queue on the embedded SQLite database (node:sqlite). These are the hot paths
// of ingest and delivery, so they run prepared SQL inside `BEGIN IMMEDIATE` on the raw
// connection (db/index.ts writeTransaction) instead of building queries with Kysely, which
// cost more than running them (docs/decisions/0003). One process owns the database, so
// nothing else claims meanwhile; the claim and the lease are still written as a lease, so a
// crashed attempt is picked up once its lease expires.

import type { SignalTable, WebhookDeliveryTable } from '../db/index.ts';
import { type Db, type Statements, writeTransaction } from '../db/index.ts';
import { timeOrderedUuid } from '../ids.ts';
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
import type {
  AttemptOutcome,
  AttemptRecord,
  DeliveryUpdate,
  EndpointHealth,
  OutcomeDecision,
} from './outcome-policy.ts';

/**
 * Each endpoint's oldest due deliveries (one index seek per endpoint, at most the
 * per-endpoint limit each), round-robin over the endpoints (each one's oldest, then each
 * one's second oldest …), so that one endpoint's backlog never fills a claim that others'
 * deliveries are waiting for; the same order as the PostgreSQL queue's.
 */
const SQL_DUE = `
  select id, endpoint_id from (
    select d.id, d.endpoint_id, d.next_attempt_at,
      row_number() over (partition by d.endpoint_id order by d.next_attempt_at) as turn
    from webhook_endpoints e
    join webhook_deliveries d on d.id in (
      select x.id from webhook_deliveries x
      where x.endpoint_id = e.id and x.state = 'pending' and x.next_attempt_at <= ?
      order by x.next_attempt_at limit ?))
  order by turn, next_attempt_at
  limit ?`;
/** Deliveries whose lease expired: a crashed or lost attempt. */
const SQL_EXPIRED = `
  select id, endpoint_id from webhook_deliveries
  where state = 'delivering' and lease_until < ? limit ?`;
/** Takes the lease on one row, if it is still due (found by its primary key). */
const SQL_LEASE = `
  update webhook_deliveries set state = 'delivering', lease_until = ?
  where id = ? and ((state = 'pending' and next_attempt_at <= ?) or (state = 'delivering' and lease_until < ?))
  returning *`;
const SQL_ENDPOINT = `
  select id, updated_at, url, enabled, secret_sealed, headers, previous_secret_sealed, previous_secret_expires_at,
    rotation_proof_signal_id
  from webhook_endpoints where id = ?`;
const SQL_SIGNAL = 'select * from signals where id = ?';

export class SqliteDeliveryQueue implements DeliveryQueue {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  enqueue(entries: readonly OutboxEntry[]): Promise<EnqueueResult[]> {
    return writeTransaction(this.db, (sql) => {
      const results: EnqueueResult[] = [];
      for (const { signal, onlyEndpointId } of entries) {
        sql.db.exec('SAVEPOINT signal');
        try {
          results.push({ ok: true, deliveryIds: insertSignal(sql, signal, onlyEndpointId) });
          sql.db.exec('RELEASE signal');
        } catch (error) {
          sql.db.exec('ROLLBACK TO signal');
          sql.db.exec('RELEASE signal');
          results.push({ ok: false, error });
        }
      }
      return results;
    });
  }

  claim({ now, leaseMs, limit, perEndpoint, busy }: ClaimRequest): Promise<ClaimedDelivery[]> {
    const nowIso = now.toISOString();
    const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
    return writeTransaction(this.db, (sql) => {
      type Candidate = { id: string; endpoint_id: string };
      const candidates = [
        ...sql.all<Candidate>(SQL_EXPIRED, nowIso, limit),
        ...sql.all<Candidate>(SQL_DUE, nowIso, perEndpoint, limit * 2),
      ];
      const taking = new Map<string, number>();
      const claimed: ClaimedDelivery[] = [];
      // Each endpoint is read once per claim.
      const endpoints = new Map<string, DeliveryEndpointRow | undefined>();
      for (const c of candidates) {
        const taken = taking.get(c.endpoint_id) ?? 0;
        if ((busy.get(c.endpoint_id) ?? 0) + taken >= perEndpoint) continue;
        const delivery = sql.get<WebhookDeliveryTable>(SQL_LEASE, leaseUntil, c.id, nowIso, nowIso);
        if (!delivery) continue;
        taking.set(c.endpoint_id, taken + 1);
        let endpoint = endpoints.get(delivery.endpoint_id);
        if (!endpoints.has(delivery.endpoint_id)) {
          endpoint = sql.get<DeliveryEndpointRow>(SQL_ENDPOINT, delivery.endpoint_id);
          endpoints.set(delivery.endpoint_id, endpoint);
        }
        claimed.push({ delivery, signal: sql.get<SignalTable>(SQL_SIGNAL, delivery.signal_id), endpoint });
        if (claimed.length >= limit) break;
      }
      return claimed;
    });
  }

  async watch(): Promise<() => Promise<void>> {
    return async () => {}; // one process owns the database: its own wake() is all there is
  }

  releaseAllLeases(): Promise<number> {
    return writeTransaction(this.db, (sql) =>
      sql.run(`update webhook_deliveries set state = 'pending', lease_until = null where state = 'delivering'`),
    );
  }

  recordOutcomes(outcomes: readonly AttemptOutcome[], policy: OutcomePolicy): Promise<RecordedOutcomes> {
    return writeTransaction(this.db, (sql) => {
      // Each endpoint's health is read once per batch and kept up to date as the batch changes it.
      const health = new Map<string, EndpointHealth | undefined>();
      const decisions: (OutcomeDecision | undefined)[] = [];
      const disabling = new Map<string, { reason: string; at: string }>();
      for (const o of outcomes) {
        const endpointId = o.delivery.endpoint_id;
        let endpoint = health.get(endpointId);
        if (!health.has(endpointId)) {
          const row = sql.get<{ enabled: number; failing_since: string | null }>(
            'select enabled, failing_since from webhook_endpoints where id = ?',
            endpointId,
          );
          endpoint = row && { enabled: row.enabled === 1, failingSince: row.failing_since };
          health.set(endpointId, endpoint);
        }
        const decision = policy(o, endpoint);
        // The delivery row first: only a delivery that still exists (its endpoint was not
        // deleted meanwhile) gets an attempt row and moves its endpoint's health.
        if (updateDelivery(sql, o.delivery.id, decision.delivery) === 0) {
          decisions.push(undefined);
          continue;
        }
        if (decision.attempt) insertAttempt(sql, o, decision.attempt);
        if (endpoint && decision.failingSince !== undefined) {
          sql.run('update webhook_endpoints set failing_since = ? where id = ?', decision.failingSince, endpointId);
          health.set(endpointId, { ...endpoint, failingSince: decision.failingSince });
        }
        if (decision.disable) disabling.set(endpointId, decision.disable);
        decisions.push(decision);
      }
      for (const [endpointId, { reason, at }] of disabling) {
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
      const disabled = new Map<string, string>();
      for (const [endpointId, { reason }] of disabling) disabled.set(endpointId, reason);
      return { decisions, disabled };
    });
  }
}

function insertSignal(sql: Statements, s: SignalTable, onlyEndpointId: string | undefined): string[] {
  sql.run(
    `insert into signals (id, tenant_id, agent_id, server_id, server_name, signal_type, severity, description,
       identity_id, identity_name, environment, created_at, received_at, is_test, traceparent)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    s.traceparent ?? null,
  );
  const endpoints =
    onlyEndpointId === undefined
      ? sql.all<{ id: string }>(
          'select id from webhook_endpoints where tenant_id = ? and enabled = 1 order by id',
          s.tenant_id,
        )
      : sql.all<{ id: string }>(
          'select id from webhook_endpoints where tenant_id = ? and enabled = 1 and id = ?',
          s.tenant_id,
          onlyEndpointId,
        );
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

function insertAttempt(sql: Statements, o: AttemptOutcome, a: AttemptRecord): void {
  sql.run(
    `insert into webhook_attempts (id, delivery_id, tenant_id, attempt, started_at, duration_ms, status, error,
       response_excerpt, signature, traceparent) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
  );
}
