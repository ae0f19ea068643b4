// The delivery worker. Named steps: claim due deliveries (a lease) → prepare the attempt
// (envelope stamped with the send time, signed) → HTTP call → record the outcome (success,
// retry at the next scheduled time, or failed) → maybe disable an endpoint that has failed
// without a break for too long.
//
// At-least-once: a delivery row exists before anything is sent (outbox, written with its
// signal); a claim is a lease that expires, so a crash mid-attempt means the delivery is
// sent again with the same Guard-Delivery. One slow endpoint never delays the others: each
// endpoint has its own concurrency limit under the global one.

import type { Dispatcher } from 'undici';
import type { SignalTable, WebhookDeliveryTable, WebhookEndpointTable } from '../db/index.ts';
import { type Db, type Statements, writeTransaction } from '../db/index.ts';
import { timeOrderedUuid } from '../ids.ts';
import { openHeaders, sealPlaintextHeaders } from './endpoint-headers.ts';
import { buildAttempt } from './envelope.ts';
import { type DeliveryResponse, sendDelivery } from './http-client.ts';
import type { WebhookMetrics } from './metrics.ts';
import { nextRetryDelay, parseRetryAfter } from './retry-schedule.ts';
import { open } from './secret-box.ts';

export interface WorkerOptions {
  concurrency: number;
  perEndpointConcurrency: number;
  leaseMs: number;
  pollMs: number;
  timeoutMs: number;
  schedule: readonly number[];
  /** An endpoint failing without a break for this long is disabled. */
  disableAfterMs: number;
}

export interface WorkerDeps {
  db: Db;
  agent: Dispatcher;
  secretKey: Buffer;
  consoleBaseUrl: () => string;
  now: () => Date;
  random: () => number;
  metrics: WebhookMetrics;
  log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
}

interface CachedEndpoint {
  updatedAt: string;
  url: string;
  enabled: boolean;
  secret: string;
  headers: Record<string, string>;
}

/** A claimed delivery with what its attempt needs, read in the claim's transaction. */
interface Claimed {
  delivery: WebhookDeliveryTable;
  signal: SignalTable | undefined;
  endpoint: CachedEndpoint | undefined;
  /** Reading the endpoint failed (its secret could not be opened): the attempt records an internal error. */
  endpointError?: unknown;
}

type EndpointRow = Pick<WebhookEndpointTable, 'id' | 'updated_at' | 'url' | 'enabled' | 'secret_sealed' | 'headers'>;

/**
 * Each endpoint's oldest due deliveries (one index seek per endpoint, at most the
 * per-endpoint limit each), oldest first.
 */
const SQL_DUE = `
  select d.id, d.endpoint_id from webhook_endpoints e
  join webhook_deliveries d on d.id in (
    select x.id from webhook_deliveries x
    where x.endpoint_id = e.id and x.state = 'pending' and x.next_attempt_at <= ?
    order by x.next_attempt_at limit ?)
  order by d.next_attempt_at
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

interface Outcome {
  delivery: WebhookDeliveryTable;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  response: DeliveryResponse | undefined;
  error: string | undefined;
  /** Set when nothing was sent because the delivery can no longer be made: it is failed. */
  abandoned?: string;
}

/** A failed attempt (or a delivery given up without one), logged once its outcome is written. */
interface FailureLog {
  endpointId: string;
  deliveryId: string;
  attempt: number | null;
  status: number | null;
  error: string;
  outcome: 'retrying' | 'failed';
  nextAttemptAt: string | null;
}

const OUTCOME_FLUSH_MS = 5;
const OUTCOME_BATCH_MAX = 500;

export class DeliveryWorker {
  private deps: WorkerDeps;
  private readonly options: WorkerOptions;
  private readonly inflightByEndpoint = new Map<string, number>();
  private inflight = 0;
  private running = false;
  private ticking = false;
  private tickAgain = false;
  private timer: NodeJS.Timeout | undefined;
  private woken: NodeJS.Immediate | undefined;
  private readonly endpoints = new Map<string, CachedEndpoint>();
  private readonly outcomes: Outcome[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly idle = new Set<() => void>();

  constructor(deps: WorkerDeps, options: WorkerOptions) {
    this.deps = deps;
    this.options = options;
  }

  /** The app's logger exists only once the app is built. */
  setLog(log: WorkerDeps['log']): void {
    this.deps = { ...this.deps, log };
  }

  /**
   * Starts polling. With the embedded SQLite database one process owns the data, so leases
   * held by a previous (crashed) run are released at once instead of waiting them out.
   * Custom header values an earlier release stored in clear are sealed first.
   */
  async start(options: { releaseLeases: boolean }): Promise<void> {
    const sealed = await sealPlaintextHeaders(this.deps.db, this.deps.secretKey);
    if (sealed > 0) this.deps.log.info({ endpoints: sealed }, 'sealed custom header values stored in clear');
    if (options.releaseLeases)
      await this.deps.db
        .updateTable('webhook_deliveries')
        .set({ state: 'pending', lease_until: null })
        .where('state', '=', 'delivering')
        .execute();
    this.running = true;
    this.wake();
  }

  /** Stops claiming, waits for attempts in flight and writes their outcomes. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.woken) clearImmediate(this.woken);
    if (this.inflight > 0) await new Promise<void>((resolve) => this.idle.add(resolve));
    await this.flushOutcomes();
  }

  /**
   * New work or a free slot (a signal was created, a delivery redelivered, an attempt
   * answered): claim once the current turn of the event loop is done, so that everything
   * that happened in it is claimed together (setImmediate: a timer would wait ≥ 1 ms).
   */
  wake(): void {
    if (!this.running || this.woken) return;
    this.woken = setImmediate(() => {
      this.woken = undefined;
      void this.tick();
    });
    this.woken.unref();
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    if (this.ticking) {
      this.tickAgain = true;
      return;
    }
    this.ticking = true;
    try {
      do {
        this.tickAgain = false;
        const claimed = await this.claim();
        for (const c of claimed) void this.attempt(c);
        if (claimed.length > 0) this.tickAgain ||= this.inflight < this.options.concurrency;
      } while (this.tickAgain && this.running);
    } catch (error) {
      this.deps.log.error({ err: error }, 'claiming webhook deliveries failed');
    } finally {
      this.ticking = false;
      if (this.running) this.schedule(this.options.pollMs);
    }
  }

  /**
   * Step 1: claim due deliveries, at most the free slots overall and per endpoint, in one
   * transaction that also reads their signals and endpoints.
   */
  private async claim(): Promise<Claimed[]> {
    const free = this.options.concurrency - this.inflight;
    if (free <= 0) return [];
    const now = this.deps.now();
    const nowIso = now.toISOString();
    const leaseUntil = new Date(now.getTime() + this.options.leaseMs).toISOString();
    const perEndpoint = this.options.perEndpointConcurrency;
    const claimed = await writeTransaction(this.deps.db, (sql) => {
      type Candidate = { id: string; endpoint_id: string };
      const candidates = [
        ...sql.all<Candidate>(SQL_EXPIRED, nowIso, free),
        ...sql.all<Candidate>(SQL_DUE, nowIso, perEndpoint, free * 2),
      ];
      const taking = new Map<string, number>();
      const rows: Claimed[] = [];
      // Each endpoint read once per claim: its row (cached secret), or why it could not be read.
      const endpoints = new Map<string, { endpoint?: CachedEndpoint; error?: unknown }>();
      for (const c of candidates) {
        const busy = (this.inflightByEndpoint.get(c.endpoint_id) ?? 0) + (taking.get(c.endpoint_id) ?? 0);
        if (busy >= perEndpoint) continue;
        const delivery = sql.get<WebhookDeliveryTable>(SQL_LEASE, leaseUntil, c.id, nowIso, nowIso);
        if (!delivery) continue;
        taking.set(c.endpoint_id, (taking.get(c.endpoint_id) ?? 0) + 1);
        let read = endpoints.get(delivery.endpoint_id);
        if (!read) {
          try {
            read = { endpoint: this.endpoint(sql, delivery.endpoint_id) };
          } catch (error) {
            read = { error };
          }
          endpoints.set(delivery.endpoint_id, read);
        }
        rows.push({
          delivery,
          signal: sql.get<SignalTable>('select * from signals where id = ?', delivery.signal_id),
          endpoint: read.endpoint,
          endpointError: read.error,
        });
        if (rows.length >= free) break;
      }
      return rows;
    });
    for (const { delivery } of claimed) {
      this.inflight++;
      this.inflightByEndpoint.set(delivery.endpoint_id, (this.inflightByEndpoint.get(delivery.endpoint_id) ?? 0) + 1);
    }
    return claimed;
  }

  /** Steps 2–3: prepare and send one attempt; the outcome is queued for a batched write. */
  private async attempt({ delivery, signal, endpoint, endpointError }: Claimed): Promise<void> {
    const attempt = delivery.attempts + 1;
    const startedAt = this.deps.now();
    let response: DeliveryResponse | undefined;
    let error: string | undefined;
    try {
      if (endpointError) throw endpointError;
      if (!endpoint?.enabled || !signal) {
        const abandoned = !endpoint?.enabled ? 'the endpoint is disabled or deleted' : 'the signal no longer exists';
        this.queueOutcome({ delivery, attempt, startedAt, durationMs: 0, response, error, abandoned });
        return;
      }
      const { body, headers } = buildAttempt(signal, delivery, endpoint, this.deps.consoleBaseUrl(), startedAt);
      const t0 = performance.now();
      try {
        response = await sendDelivery(this.deps.agent, {
          url: endpoint.url,
          headers,
          body,
          timeoutMs: this.options.timeoutMs,
        });
      } catch (e) {
        error = describeError(e, this.options.timeoutMs);
      }
      const durationMs = Math.round(performance.now() - t0);
      this.deps.metrics.attemptDuration.observe(durationMs / 1000);
      this.queueOutcome({ delivery, attempt, startedAt, durationMs, response, error });
    } catch (e) {
      this.deps.log.error({ err: e, deliveryId: delivery.id }, 'webhook attempt failed before sending');
      this.queueOutcome({
        delivery,
        attempt,
        startedAt,
        durationMs: 0,
        response,
        error: 'internal error preparing the attempt',
      });
    }
  }

  /**
   * Queues an outcome for the batched write and frees the endpoint's slot at once: the row
   * stays leased until its outcome is written, so nobody else can claim it meanwhile.
   */
  private queueOutcome(outcome: Outcome): void {
    this.outcomes.push(outcome);
    this.release(outcome.delivery.endpoint_id);
    if (this.outcomes.length >= OUTCOME_BATCH_MAX) void this.flushOutcomes();
    else if (!this.flushTimer) this.flushTimer = setTimeout(() => void this.flushOutcomes(), OUTCOME_FLUSH_MS);
  }

  /** Step 4: write outcomes (attempt rows, delivery state, endpoint health) in one transaction. */
  private flushOutcomes(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.flushTimer) clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
      const batch = this.outcomes.splice(0, this.outcomes.length);
      if (batch.length === 0) return;
      const now = this.deps.now();
      const nowIso = now.toISOString();
      const toDisable = new Map<string, string>();
      const counted: string[] = [];
      const failures: FailureLog[] = [];
      try {
        await writeTransaction(this.deps.db, (sql) => {
          for (const o of batch) {
            const outcome = this.recordOutcome(sql, o, now, toDisable, failures);
            if (outcome) counted.push(outcome);
          }
          for (const [endpointId, reason] of toDisable) {
            sql.run(
              'update webhook_endpoints set enabled = 0, disabled_reason = ?, updated_at = ? where id = ?',
              reason,
              nowIso,
              endpointId,
            );
            sql.run(
              `update webhook_deliveries set state = 'failed', last_error = 'the endpoint was disabled',
                 completed_at = ?, lease_until = null
               where endpoint_id = ? and state = 'pending'`,
              nowIso,
              endpointId,
            );
          }
        });
        for (const outcome of counted) this.deps.metrics.deliveries.inc({ outcome });
        // Only failures log (never the secret, header values, body or response): the hot path stays silent.
        for (const f of failures)
          this.deps.log.warn(
            f,
            f.attempt === null ? 'webhook delivery given up without an attempt' : 'webhook delivery attempt failed',
          );
        for (const [endpointId, reason] of toDisable) this.deps.log.warn({ endpointId }, reason);
      } catch (error) {
        // The rows stay leased; the lease expires and they are attempted again (at-least-once).
        this.deps.log.error({ err: error, outcomes: batch.length }, 'recording webhook outcomes failed');
      } finally {
        if (this.running) this.wake();
      }
    });
    return this.flushing;
  }

  /**
   * Records one outcome inside the batch transaction and returns its metric label, or
   * undefined when the delivery no longer exists (its endpoint was deleted meanwhile):
   * the delivery row is updated first, and only a row that is still there gets an attempt.
   * Failures are added to `failures`, to be logged once the transaction has committed.
   */
  private recordOutcome(
    sql: Statements,
    o: Outcome,
    now: Date,
    toDisable: Map<string, string>,
    failures: FailureLog[],
  ): 'succeeded' | 'retrying' | 'failed' | undefined {
    const nowIso = now.toISOString();
    const id = o.delivery.id;
    const endpointId = o.delivery.endpoint_id;
    if (o.abandoned) {
      const changed = sql.run(
        `update webhook_deliveries set state = 'failed', lease_until = null, last_error = ?, completed_at = ? where id = ?`,
        o.abandoned,
        nowIso,
        id,
      );
      if (changed === 0) return undefined;
      failures.push({
        endpointId,
        deliveryId: id,
        attempt: null,
        status: null,
        error: o.abandoned,
        outcome: 'failed',
        nextAttemptAt: null,
      });
      return 'failed';
    }
    const status = o.response?.status ?? null;
    if (status !== null && status >= 200 && status < 300) {
      const changed = sql.run(
        `update webhook_deliveries set state = 'succeeded', attempts = ?, lease_until = null, last_status = ?,
           last_error = null, completed_at = ? where id = ?`,
        o.attempt,
        status,
        nowIso,
        id,
      );
      if (changed === 0) return undefined;
      this.insertAttempt(sql, o, status, null);
      // Endpoint health: a success ends a failing streak.
      sql.run(
        'update webhook_endpoints set failing_since = null where id = ? and failing_since is not null',
        endpointId,
      );
      return 'succeeded';
    }

    const redirect = status !== null && status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
    const error = o.error ?? `HTTP ${status}${redirect}`;
    const ep = sql.get<{ failing_since: string | null; enabled: number }>(
      'select failing_since, enabled from webhook_endpoints where id = ?',
      endpointId,
    );
    // An endpoint disabled while this attempt was in flight gets no retry (its pending
    // deliveries were failed when it was disabled).
    const retryAfter = parseRetryAfter(headerString(o.response?.headers['retry-after']), now);
    const delay = ep?.enabled
      ? nextRetryDelay(this.options.schedule, o.attempt, this.deps.random, retryAfter)
      : undefined;
    const nextAttemptAt = delay === undefined ? null : new Date(now.getTime() + delay).toISOString();
    const changed =
      nextAttemptAt === null
        ? sql.run(
            `update webhook_deliveries set state = 'failed', attempts = ?, lease_until = null, last_status = ?,
               last_error = ?, completed_at = ? where id = ?`,
            o.attempt,
            status,
            error,
            nowIso,
            id,
          )
        : sql.run(
            `update webhook_deliveries set state = 'pending', attempts = ?, lease_until = null, last_status = ?,
               last_error = ?, next_attempt_at = ? where id = ?`,
            o.attempt,
            status,
            error,
            nextAttemptAt,
            id,
          );
    if (changed === 0) return undefined;
    this.insertAttempt(sql, o, status, error);
    const outcome = nextAttemptAt === null ? 'failed' : 'retrying';
    failures.push({ endpointId, deliveryId: id, attempt: o.attempt, status, error, outcome, nextAttemptAt });
    // Endpoint health: a failure starts or continues a failing streak, and a streak longer
    // than disableAfterMs disables the endpoint.
    if (!ep?.enabled) return outcome;
    if (ep.failing_since === null) {
      sql.run('update webhook_endpoints set failing_since = ? where id = ?', o.startedAt.toISOString(), endpointId);
    } else if (now.getTime() - Date.parse(ep.failing_since) >= this.options.disableAfterMs) {
      toDisable.set(
        endpointId,
        `disabled automatically: every delivery attempt failed since ${ep.failing_since} (last: ${error})`,
      );
    }
    return outcome;
  }

  private insertAttempt(sql: Statements, o: Outcome, status: number | null, error: string | null): void {
    sql.run(
      `insert into webhook_attempts (id, delivery_id, tenant_id, attempt, started_at, duration_ms, status, error,
         response_excerpt) values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      timeOrderedUuid(),
      o.delivery.id,
      o.delivery.tenant_id,
      o.attempt,
      o.startedAt.toISOString(),
      o.durationMs,
      status,
      error,
      o.response?.excerpt ?? null,
    );
  }

  private release(endpointId: string): void {
    this.inflight--;
    const n = (this.inflightByEndpoint.get(endpointId) ?? 1) - 1;
    if (n <= 0) this.inflightByEndpoint.delete(endpointId);
    else this.inflightByEndpoint.set(endpointId, n);
    if (this.inflight === 0) {
      for (const resolve of this.idle) resolve();
      this.idle.clear();
    }
    if (this.running) this.wake();
  }

  /** Endpoint with its decrypted secret, cached until the row's updated_at changes. */
  private endpoint(sql: Statements, id: string): CachedEndpoint | undefined {
    const row = sql.get<EndpointRow>(
      'select id, updated_at, url, enabled, secret_sealed, headers from webhook_endpoints where id = ?',
      id,
    );
    if (!row) {
      this.endpoints.delete(id);
      return undefined;
    }
    const cached = this.endpoints.get(id);
    if (cached && cached.updatedAt === row.updated_at && cached.enabled === (row.enabled === 1)) return cached;
    const fresh: CachedEndpoint = {
      updatedAt: row.updated_at,
      url: row.url,
      enabled: row.enabled === 1,
      secret: open(this.deps.secretKey, row.secret_sealed, id),
      headers: openHeaders(this.deps.secretKey, id, row.headers),
    };
    this.endpoints.set(id, fresh);
    return fresh;
  }
}

function headerString(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function describeError(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT')
    return `timed out after ${timeoutMs / 1000} s`;
  if (e?.code === 'ERR_GUARD_SSRF') return e.message ?? 'refused address';
  const code = e?.code ?? e?.cause?.code;
  const message = e?.message ?? String(error);
  return code ? `${code}: ${message}` : message;
}
