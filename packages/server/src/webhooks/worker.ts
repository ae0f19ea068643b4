// The delivery worker, in named steps, each with its own typed state (svix's shape):
//   claim    → ClaimedDelivery   leased from the delivery queue with its signal and endpoint
//   prepare  → PreparedAttempt   envelope stamped with the send time, signed; or at once an
//                                AttemptOutcome when nothing can be sent
//   send     → AttemptOutcome    the HTTP call and what came of it
//   record   → OutcomeDecision   batched: the pure policy decides (outcome-policy.ts), the
//                                queue writes (retry, failed, endpoint health, disabling)
//
// At-least-once: a delivery row exists before anything is sent (outbox, written with its
// signal); a claim is a lease that expires, so a crash mid-attempt means the delivery is
// sent again with the same Guard-Delivery. One slow endpoint never delays the others: each
// endpoint has its own concurrency limit under the global one. The worker holds no SQL: the
// queue (delivery-queue.ts) is one implementation per database engine.

import type { Dispatcher } from 'undici';
import type { WebhookDeliveryTable } from '../db/index.ts';
import { BackgroundLoop } from '../kernel/background-loop.ts';
import { open } from '../kernel/secret-box.ts';
import { NO_TRACER, type SpanHandle, type Tracer } from '../tracing/index.ts';
import type {
  ClaimedDelivery,
  ClaimRequest,
  DeliveryEndpointRow,
  DeliveryQueue,
  OutcomePolicy,
  RecordedAndClaimed,
  RecordedOutcomes,
} from './delivery-queue.ts';
import { basicAuthorization, type EndpointAuth, openAuth } from './endpoint-auth.ts';
import { openHeaders } from './endpoint-headers.ts';
import { endpointTlsOptions } from './endpoint-tls.ts';
import { buildAttempt } from './envelope.ts';
import { type DeliveryAgents, type DeliveryResponse, sendDelivery } from './http-client.ts';
import type { WebhookMetrics } from './metrics.ts';
import { OAuth2Tokens } from './oauth2-tokens.ts';
import { type AttemptOutcome, decideOutcome, type OutcomeDecision } from './outcome-policy.ts';
import { keptResponseHeaders } from './response-headers.ts';
import { signingSecrets } from './secret-rotation.ts';
import { eventTypeOf } from './subscriptions.ts';

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

export interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WorkerDeps {
  queue: DeliveryQueue;
  /** The shared agent, and one of its own for an endpoint with TLS settings (client certificate, CA bundle). */
  agents: DeliveryAgents;
  /** OAuth2 client-credentials tokens, cached per endpoint; a fresh cache when not given. */
  tokens?: OAuth2Tokens;
  secretKey: Buffer;
  consoleBaseUrl: () => string;
  now: () => Date;
  random: () => number;
  metrics: WebhookMetrics;
  log: WorkerLog;
  /** A span per attempt, child of the signal's traceparent; the no-op tracer when tracing is off. */
  tracer?: Tracer;
}

/** An endpoint with its secrets and header values opened, cached until its row changes. */
interface OpenedEndpoint {
  row: DeliveryEndpointRow;
  url: string;
  /** The URL's host and port: the only part of it a span records (never its path or query). */
  host: string;
  enabled: boolean;
  secret: string;
  /** During a secret rotation: the secret being replaced, and when its grace period ends. */
  previousSecret: string | undefined;
  previousExpiresAtMs: number | undefined;
  /** The rotation's proof test event: signed with the new secret alone. */
  proofSignalId: string | null;
  headers: Record<string, string>;
  /** The agent its requests go through: the shared one, or its own (`ownAgent`) for its TLS settings. */
  agent: Dispatcher;
  ownAgent: boolean;
  /** How it authenticates to the receiver (Basic goes into `headers`; OAuth2 is added as sent). */
  auth: EndpointAuth | null;
}

/** Step 2's result when there is something to send. */
interface PreparedAttempt {
  endpoint: OpenedEndpoint;
  delivery: WebhookDeliveryTable;
  attempt: number;
  startedAt: Date;
  url: string;
  headers: Record<string, string>;
  body: string;
  span: SpanHandle;
  /** A test event: its failure does not count against the endpoint (outcome-policy.ts). */
  testEvent: boolean;
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
/** Slots freed within this long of the first are claimed by one pass. */
const RELEASE_CLAIM_MS = 1;
const OUTCOME_BATCH_MAX = 500;

export class DeliveryWorker {
  private readonly deps: WorkerDeps;
  private readonly options: WorkerOptions;
  private readonly inflightByEndpoint = new Map<string, number>();
  private stopWatching: (() => Promise<void>) | undefined;
  private inflight = 0;
  private readonly endpoints = new Map<string, OpenedEndpoint>();
  private readonly outcomes: AttemptOutcome[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly idle = new Set<() => void>();
  /** One process owns the queue (SQLite): its own counts of what is in flight are all the leases there are. */
  private soleOwner = false;
  private releaseWake: NodeJS.Timeout | undefined;

  private readonly loop: BackgroundLoop;
  private readonly tokens: OAuth2Tokens;

  constructor(deps: WorkerDeps, options: WorkerOptions) {
    this.deps = deps;
    this.tokens = deps.tokens ?? new OAuth2Tokens();
    this.options = options;
    this.loop = new BackgroundLoop(() => this.pass(), {
      what: 'claiming webhook deliveries',
      retryMs: options.pollMs,
      log: deps.log,
    });
  }

  /**
   * Starts polling, and listening for work other processes made (the queue's watch). With the
   * embedded SQLite database one process owns the data, so leases held by a previous
   * (crashed) run are released at once instead of waiting them out; on a database that
   * replicas share they are waited out (`releaseLeases: false`).
   */
  async start(options: { releaseLeases: boolean }): Promise<void> {
    this.soleOwner = options.releaseLeases;
    if (options.releaseLeases) await this.deps.queue.releaseAllLeases();
    this.loop.start();
    this.stopWatching = await this.deps.queue.watch(() => this.wake());
  }

  /** Stops claiming, waits for attempts in flight and writes their outcomes. */
  async stop(): Promise<void> {
    await this.loop.stop();
    clearTimeout(this.releaseWake);
    this.releaseWake = undefined;
    await this.stopWatching?.();
    this.stopWatching = undefined;
    if (this.inflight > 0) await new Promise<void>((resolve) => this.idle.add(resolve));
    await this.flushOutcomes();
    await Promise.all([...this.endpoints.values()].map((e) => (e.ownAgent ? e.agent.close() : undefined)));
    this.endpoints.clear();
  }

  /**
   * New work or a free slot (a signal was created, a delivery redelivered, an attempt
   * answered): claim once the current turn of the event loop is done, so that everything
   * that happened in it is claimed together.
   */
  wake(): void {
    this.loop.wake();
  }

  /**
   * Step 1 and the dispatch; the next pass after pollMs unless woken first. A claim takes every
   * due delivery its free slots allow, so more work comes with a wake: a new signal or a
   * redelivery (wake), a retry recorded as due now (flushOutcomes), a slot freed where the
   * claim left deliveries waiting (release); the poll finds retries that came due meanwhile.
   */
  private async pass(): Promise<number> {
    const claimed = await this.claim();
    for (const c of claimed) void this.deliver(c);
    return this.options.pollMs;
  }

  /** One claimed delivery through steps 2–4. */
  private async deliver(claimed: ClaimedDelivery): Promise<void> {
    const prepared = this.prepare(claimed);
    this.queueOutcome('result' in prepared ? prepared : await this.send(prepared));
  }

  /** Step 1: lease due deliveries, at most the free slots overall and per endpoint. */
  private async claim(): Promise<ClaimedDelivery[]> {
    const free = this.options.concurrency - this.inflight;
    if (free <= 0) return [];
    const claimed = await this.claimWithOutcomes({
      now: this.deps.now(),
      leaseMs: this.options.leaseMs,
      limit: free,
      perEndpoint: this.options.perEndpointConcurrency,
      busy: this.inflightByEndpoint,
    });
    for (const { delivery } of claimed) {
      this.inflight++;
      adjust(this.inflightByEndpoint, delivery.endpoint_id, 1);
    }
    return claimed;
  }

  /**
   * The claim; the outcomes waiting for their write go with it, in one transaction, where the
   * queue can (SQLite: one commit instead of two). A failure of that transaction leaves their
   * rows leased, as a failed write of outcomes does (their leases expire: at-least-once).
   */
  private async claimWithOutcomes(request: ClaimRequest): Promise<ClaimedDelivery[]> {
    const { queue } = this.deps;
    if (!queue.recordOutcomesAndClaim || this.outcomes.length === 0) return queue.claim(request);
    const batch = this.takeOutcomes();
    let result: RecordedAndClaimed;
    try {
      result = await queue.recordOutcomesAndClaim(batch, this.outcomePolicy(request.now), request);
    } catch (error) {
      this.deps.log.error({ err: error, outcomes: batch.length }, 'recording webhook outcomes failed');
      throw error;
    }
    this.recorded(batch, result.recorded);
    return result.claimed;
  }

  /**
   * Step 2: the attempt's body and headers, signed, stamped with the send time; or, when
   * nothing can be sent, its outcome: abandoned (the endpoint is disabled or deleted, or the
   * signal is gone) or an internal error (the endpoint's secret could not be opened).
   */
  private prepare({ delivery, signal, endpoint: row }: ClaimedDelivery): PreparedAttempt | AttemptOutcome {
    const attempt = delivery.attempts + 1;
    const startedAt = this.deps.now();
    try {
      const endpoint = this.openEndpoint(delivery.endpoint_id, row);
      if (!endpoint?.enabled || !signal) {
        const reason = !endpoint?.enabled ? 'the endpoint is disabled or deleted' : 'the signal no longer exists';
        return { delivery, attempt, startedAt, durationMs: 0, result: { kind: 'abandoned', reason } };
      }
      if (signal.erased_at) {
        const reason = "the signal's payload was erased";
        return { delivery, attempt, startedAt, durationMs: 0, result: { kind: 'abandoned', reason } };
      }
      const secrets = signingSecrets(endpoint, signal.id === endpoint.proofSignalId, startedAt);
      // The attempt's span is a child of the signal's trace, and the receiver's parent: its
      // traceparent goes out (with tracing off, the signal's own passes through).
      const span = (this.deps.tracer ?? NO_TRACER).startSpan('webhook attempt', {
        kind: 'client',
        parent: signal.traceparent ?? undefined,
        attributes: {
          'http.request.method': 'POST',
          'server.address': endpoint.host,
          'guard.delivery.id': delivery.id,
          'guard.endpoint.id': delivery.endpoint_id,
          'guard.signal.id': signal.id,
          'guard.attempt': attempt,
        },
      });
      const { body, headers } = buildAttempt(
        signal,
        delivery,
        { secrets, headers: endpoint.headers, traceparent: span.traceparent },
        this.deps.consoleBaseUrl(),
        startedAt,
      );
      const testEvent = eventTypeOf(signal) === 'test';
      if (endpoint.auth?.type === 'basic')
        headers.authorization = basicAuthorization(endpoint.auth.username, endpoint.auth.password);
      return { endpoint, delivery, attempt, startedAt, url: endpoint.url, headers, body, span, testEvent };
    } catch (e) {
      this.deps.log.error({ err: e, deliveryId: delivery.id }, 'webhook attempt failed before sending');
      return {
        delivery,
        attempt,
        startedAt,
        durationMs: 0,
        result: { kind: 'error', error: 'internal error preparing the attempt' },
      };
    }
  }

  /** Step 3: the HTTP call. Never throws: a failure is an outcome. */
  private async send(p: PreparedAttempt): Promise<AttemptOutcome> {
    const { timeoutMs } = this.options;
    const t0 = performance.now();
    let result: AttemptOutcome['result'];
    try {
      const response = await this.request(p);
      result = {
        kind: 'response',
        status: response.status,
        retryAfter: response.headers['retry-after'],
        excerpt: response.excerpt,
        headers: keptResponseHeaders(response.headers),
      };
    } catch (e) {
      result = { kind: 'error', error: describeError(e, timeoutMs) };
    }
    if (result.kind === 'response') {
      p.span.setAttributes({ 'http.response.status_code': result.status });
      if (result.status < 200 || result.status >= 300) p.span.fail(`HTTP ${result.status}`);
    } else p.span.fail(result.error);
    p.span.end();
    const durationMs = Math.round(performance.now() - t0);
    this.deps.metrics.attemptDuration.observe(durationMs / 1000);
    const sent = {
      signature: p.headers['guard-signature'],
      standardSignature: p.headers['webhook-signature'],
      traceparent: p.headers.traceparent ?? null,
    };
    const { delivery, attempt, startedAt, testEvent } = p;
    return { delivery, attempt, startedAt, durationMs, result, sent, testEvent };
  }

  /**
   * The request, authenticated as its endpoint says. With OAuth2 client credentials the access
   * token is the cached one (or fetched now); a 401 answer drops it, and the request is sent
   * once more with a new one within the same attempt (a token revoked or rotated early).
   */
  private async request(p: PreparedAttempt): Promise<DeliveryResponse> {
    const { endpoint } = p;
    const { timeoutMs } = this.options;
    const send = (headers: Record<string, string>) =>
      sendDelivery(endpoint.agent, { url: p.url, headers, body: p.body, timeoutMs });
    const auth = endpoint.auth;
    if (auth?.type !== 'oauth2_client_credentials') return send(p.headers);
    const id = endpoint.row.id;
    const token = await this.tokens.token(id, auth, endpoint.agent, timeoutMs);
    const first = await send({ ...p.headers, authorization: `Bearer ${token}` });
    if (first.status !== 401) return first;
    this.tokens.invalidate(id, auth, token);
    const fresh = await this.tokens.token(id, auth, endpoint.agent, timeoutMs);
    return send({ ...p.headers, authorization: `Bearer ${fresh}` });
  }

  /**
   * Step 4a: queues an outcome for the batched write and frees the endpoint's slot at once:
   * the row stays leased until its outcome is written, so nobody else can claim it meanwhile.
   */
  private queueOutcome(outcome: AttemptOutcome): void {
    this.outcomes.push(outcome);
    this.release(outcome.delivery.endpoint_id);
    if (this.outcomes.length >= OUTCOME_BATCH_MAX) void this.flushOutcomes();
    else if (!this.flushTimer) this.flushTimer = setTimeout(() => void this.flushOutcomes(), OUTCOME_FLUSH_MS);
  }

  /**
   * Step 4b: the queued outcomes, decided by the policy and written in one transaction; then
   * counted and, for failures, logged.
   */
  private flushOutcomes(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const batch = this.takeOutcomes();
      if (batch.length === 0) return;
      try {
        this.recorded(batch, await this.deps.queue.recordOutcomes(batch, this.outcomePolicy(this.deps.now())));
      } catch (error) {
        // The rows stay leased; the lease expires and they are attempted again (at-least-once).
        this.deps.log.error({ err: error, outcomes: batch.length }, 'recording webhook outcomes failed');
      }
    });
    return this.flushing;
  }

  /** The outcomes queued so far, for one write; the flush timer is no longer needed for them. */
  private takeOutcomes(): AttemptOutcome[] {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    return this.outcomes.splice(0, this.outcomes.length);
  }

  private outcomePolicy(now: Date): OutcomePolicy {
    const { random } = this.deps;
    return (outcome, endpoint) => decideOutcome(outcome, endpoint, this.options, now, random);
  }

  /** A batch of outcomes written: counted and, for failures, logged. */
  private recorded(batch: readonly AttemptOutcome[], { decisions, disabled }: RecordedOutcomes): void {
    for (const d of decisions) if (d) this.deps.metrics.deliveries.inc({ outcome: d.outcome });
    // Only failures log (never the secret, header values, body or response): the hot path stays silent.
    for (const [i, d] of decisions.entries()) {
      if (!d || d.outcome === 'succeeded') continue;
      const f = failureLog(batch[i], d);
      this.deps.log.warn(
        f,
        f.attempt === null ? 'webhook delivery given up without an attempt' : 'webhook delivery attempt failed',
      );
    }
    for (const [endpointId, reason] of disabled) this.deps.log.warn({ endpointId }, reason);
    // A retry may be due at once (a short schedule, Retry-After: 0); a success frees nothing new.
    if (decisions.some((d) => d?.outcome === 'retrying')) this.wake();
  }

  /**
   * A slot is free again. Only a slot the last claim could not fill means work may be waiting:
   * one at an endpoint at its limit, or any while all slots were taken; elsewhere the claim
   * took everything due, and new work comes with its own wake. Where replicas share the queue
   * (PostgreSQL) the others' leases count too, so every free slot looks again. Slots freed
   * together are claimed together (RELEASE_CLAIM_MS): one transaction instead of one each.
   */
  private release(endpointId: string): void {
    const waiting =
      !this.soleOwner ||
      this.inflight >= this.options.concurrency ||
      (this.inflightByEndpoint.get(endpointId) ?? 0) >= this.options.perEndpointConcurrency;
    this.inflight--;
    adjust(this.inflightByEndpoint, endpointId, -1);
    if (this.inflight === 0) {
      for (const resolve of this.idle) resolve();
      this.idle.clear();
    }
    if (waiting && !this.releaseWake)
      this.releaseWake = setTimeout(() => {
        this.releaseWake = undefined;
        this.wake();
      }, RELEASE_CLAIM_MS).unref();
  }

  /**
   * The endpoint with its secrets and headers opened, cached until the row changes (its
   * updated_at, its enabled flag, or any of its secret columns: a rotation, and the erasure of
   * the old secret, replace the cached plaintext).
   */
  private openEndpoint(id: string, row: DeliveryEndpointRow | undefined): OpenedEndpoint | undefined {
    const cached = this.endpoints.get(id);
    if (cached && row && sameEndpointRow(cached.row, row)) return cached;
    if (cached) {
      // Its own agent finishes the requests in flight, then closes.
      if (cached.ownAgent) void cached.agent.close();
      this.tokens.forget(id);
      this.endpoints.delete(id);
    }
    if (!row) return undefined;
    const previous = row.previous_secret_sealed && row.previous_secret_expires_at;
    const tls = endpointTlsOptions(this.deps.secretKey, row);
    const fresh: OpenedEndpoint = {
      row,
      url: row.url,
      host: hostOf(row.url),
      enabled: row.enabled === 1,
      secret: open(this.deps.secretKey, row.secret_sealed, id),
      previousSecret: previous ? open(this.deps.secretKey, row.previous_secret_sealed as string, id) : undefined,
      previousExpiresAtMs: previous ? Date.parse(row.previous_secret_expires_at as string) : undefined,
      proofSignalId: row.rotation_proof_signal_id ?? null,
      headers: openHeaders(this.deps.secretKey, id, row.headers),
      agent: tls ? this.deps.agents.forEndpoint(tls) : this.deps.agents.shared,
      ownAgent: tls !== undefined,
      auth: openAuth(this.deps.secretKey, id, row.auth_sealed),
    };
    this.endpoints.set(id, fresh);
    return fresh;
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

function sameEndpointRow(a: DeliveryEndpointRow, b: DeliveryEndpointRow): boolean {
  return (
    a.updated_at === b.updated_at &&
    a.enabled === b.enabled &&
    a.secret_sealed === b.secret_sealed &&
    (a.previous_secret_sealed ?? null) === (b.previous_secret_sealed ?? null) &&
    (a.previous_secret_expires_at ?? null) === (b.previous_secret_expires_at ?? null) &&
    (a.rotation_proof_signal_id ?? null) === (b.rotation_proof_signal_id ?? null)
  );
}

/** Adds `by` to a per-endpoint count; a count that reaches 0 leaves the map. */
function adjust(counts: Map<string, number>, endpointId: string, by: number): void {
  const n = (counts.get(endpointId) ?? 0) + by;
  if (n <= 0) counts.delete(endpointId);
  else counts.set(endpointId, n);
}

function failureLog(o: AttemptOutcome, d: OutcomeDecision): FailureLog {
  const u = d.delivery;
  return {
    endpointId: o.delivery.endpoint_id,
    deliveryId: o.delivery.id,
    attempt: d.attempt ? d.attempt.attempt : null,
    status: d.attempt ? d.attempt.status : null,
    error: u.kind === 'succeeded' ? '' : u.lastError,
    outcome: d.outcome === 'retrying' ? 'retrying' : 'failed',
    nextAttemptAt: u.kind === 'retry' ? u.nextAttemptAt : null,
  };
}

function describeError(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT')
    return `timed out after ${timeoutMs / 1000} s`;
  if (e?.code === 'ERR_GUARD_SSRF' || e?.code === 'ERR_GUARD_OAUTH2' || e?.code === 'ERR_GUARD_PROXY')
    return e.message ?? 'refused';
  const code = e?.code ?? e?.cause?.code;
  const message = e?.message ?? String(error);
  return code ? `${code}: ${message}` : message;
}
