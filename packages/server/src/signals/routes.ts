// Signals: created by agents (POST /v1/signals, agent key: tenant, server_id and server_name
// come from the agent's enrolment), read by the tenant's people. Written through the outbox
// (outbox.ts): the signal and its deliveries in one transaction. An agent's Idempotency-Key
// makes a retried POST answer the first signal (200) instead of making another; the tenant's
// detection policy is applied before anything is written.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_KEY_PATTERN, isDetectionSignalType } from '@guard/contract/detection';
import { Type } from 'typebox';
import { requireAgent, requireTenantUser } from '../auth/index.ts';
import type { Db, SignalTable } from '../db/index.ts';
import { type DetectionPolicies, ingestDecision } from '../detection/index.ts';
import { badRequest, notFound } from '../kernel/errors.ts';
import { nextBefore, parseBefore } from '../kernel/pagination.ts';
import { ErrorResponses, IdParams } from '../kernel/route-schemas.ts';
import { type Tracer, validTraceparent } from '../tracing/index.ts';
import type { SignalOutbox } from './outbox.ts';
import {
  CreatedSignal,
  CreateSignal,
  CreateSignalBatch,
  SIGNAL_BATCH_MAX,
  SignalBatchAnswer,
  SignalHeaders,
  SignalList,
  SignalListQuery,
  SignalView,
  SuppressedSignal,
  signalView,
} from './schemas.ts';
import { signalFromAgent } from './signal-from-agent.ts';
import { SignalsRepository } from './signals-repository.ts';

const SUPPRESSED = "disabled by the tenant's detection policy";
const IDEMPOTENCY_KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

/** The `Idempotency-Key` header's value; null when there is none; 400 when it is not one. */
function idempotencyKey(header: string | string[] | undefined, what = 'Idempotency-Key'): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !IDEMPOTENCY_KEY.test(header))
    throw badRequest(
      `${what} must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters of A-Z, a-z, 0-9, ".", "_", ":" and "-" ` +
        '(one per signal; a retried POST sends the same key again)',
      'invalid_idempotency_key',
    );
  return header;
}

/** What one signal of a POST answers: its status and body. */
type IngestAnswer =
  | { status: 200 | 201; body: { signal_id: string; deliveries: number } }
  | { status: 202; body: { signal_id: null; deliveries: 0; suppressed: string } };

/** An RFC 3339 time in the stored form (toISOString), so that text order is time order. */
const instant = (t: string | undefined) => (t === undefined ? undefined : new Date(t).toISOString());

/** What signal ingest and the signal reads need of the server. */
export interface SignalsDeps {
  db: Db;
  now: () => Date;
  /** Tenants' detection policies: ingest applies them. */
  detection: DetectionPolicies;
  tracer: Tracer;
  /** Writes signals with their deliveries (group commit). */
  outbox: SignalOutbox;
  /** Tells the delivery worker a delivery is due now. */
  wakeDeliveries: () => void;
  /** A signal of severity 5 (critical) was created: the tenant's collection schedule may ask its server for a bundle. */
  onCriticalSignal: (signal: SignalTable) => Promise<void>;
}

/** Severity 5 is critical (schemas.ts). */
const CRITICAL_SEVERITY = 5;

export const signalRoutes: FastifyPluginAsyncTypebox<SignalsDeps> = async (app, deps) => {
  const signals = new SignalsRepository(deps.db);

  app.post(
    '/v1/signals',
    {
      config: { scope: 'signals' },
      schema: {
        tags: ['signals'],
        summary:
          'Create a security signal (agent key), or a batch of them (a JSON array); it is delivered to every enabled webhook endpoint of the tenant. ' +
          'With an Idempotency-Key this agent used before: 200 and the first signal, nothing created. A detection ' +
          "type the tenant's detection policy turned off: 202, not stored; an overridden severity replaces the agent's",
        headers: SignalHeaders,
        body: Type.Union([CreateSignal, CreateSignalBatch], {
          description: `one signal, or a JSON array of 1 to ${SIGNAL_BATCH_MAX} (each with its idempotency_key): a batch, answered 200 with one result per signal`,
        }),
        response: {
          201: CreatedSignal,
          200: Type.Union([
            { ...CreatedSignal, description: 'the signal an earlier POST with this Idempotency-Key created' },
            SignalBatchAnswer,
          ]),
          202: SuppressedSignal,
          ...ErrorResponses,
        },
      },
    },
    async (req, reply) => {
      const agent = requireAgent(req);
      const parent = validTraceparent(req.headers.traceparent);
      if (Array.isArray(req.body)) {
        // A batch: every key checked before anything is written; the signals then reach the
        // outbox in the same turn of the event loop, so they share one transaction.
        const batch = req.body as CreateSignalBatch;
        if (req.headers['idempotency-key'] !== undefined)
          throw badRequest('a batch carries an idempotency_key per signal, not an Idempotency-Key header');
        const keys = batch.map((s, i) => idempotencyKey(s.idempotency_key, `body/${i}/idempotency_key`) as string);
        const answers = await Promise.all(
          batch.map(({ idempotency_key: _key, ...body }, i) => ingest(agent, body, keys[i], parent, req.log)),
        );
        return reply.code(200).send({
          results: answers.map((a, i) => ({ idempotency_key: keys[i], status: a.status, ...a.body })),
        });
      }
      const answer = await ingest(
        agent,
        req.body as CreateSignal,
        idempotencyKey(req.headers['idempotency-key']),
        parent,
        req.log,
      );
      return reply.code(answer.status).send(answer.body);
    },
  );

  /** One signal: the detection policy, the outbox (group commit), the span, the schedule's hook. */
  async function ingest(
    agent: ReturnType<typeof requireAgent>,
    received: CreateSignal,
    key: string | null,
    parent: string | undefined,
    log: { error(obj: unknown, msg: string): void },
  ): Promise<IngestAnswer> {
    let body = received;
    // The tenant's detection policy, a safety net behind the agent's own (which it gets
    // through its command channel): a type turned off is not stored, an overridden severity
    // replaces the agent's. Other signal types pass unchanged.
    if (isDetectionSignalType(body.signal_type)) {
      const decision = ingestDecision(await deps.detection.get(agent.tenantId), body.signal_type, body.severity);
      if (decision.suppressed) {
        // A retry of a signal stored before the type was turned off still answers that signal.
        const earlier =
          key === null ? undefined : await signals.findByIdempotencyKey(agent.tenantId, agent.agentId, key);
        if (earlier) return { status: 200, body: { signal_id: earlier.signalId, deliveries: earlier.deliveries } };
        return { status: 202, body: { signal_id: null, deliveries: 0, suppressed: SUPPRESSED } };
      }
      body = { ...body, severity: decision.severity };
    }
    const signal = signalFromAgent(agent, body, deps.now().toISOString(), key);
    // W3C trace context: the agent's traceparent (an invalid one is ignored) is the ingest
    // span's parent; the signal keeps the span's (with tracing off, the agent's), and its
    // deliveries carry it on.
    const span = deps.tracer.startSpan('POST /v1/signals', {
      kind: 'server',
      parent,
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/v1/signals',
        'guard.tenant.id': agent.tenantId,
        'guard.signal.id': signal.id,
        'guard.signal.type': signal.signal_type,
      },
    });
    signal.traceparent = span.traceparent ?? null;
    try {
      const written = await deps.outbox.writeOnce(signal);
      const status = written.created ? 201 : 200;
      span.setAttributes({
        'guard.deliveries': written.deliveries,
        'http.response.status_code': status,
        ...(written.created ? {} : { 'guard.signal.id': written.signalId, 'guard.signal.replayed': true }),
      });
      if (written.created && written.deliveries > 0) deps.wakeDeliveries();
      // Scheduled collection (collection-schedule/): awaited, so the answer comes after any
      // request it made; its failure is logged and never fails the signal, which is stored.
      if (written.created && signal.severity >= CRITICAL_SEVERITY)
        await deps.onCriticalSignal(signal).catch((error: unknown) => {
          log.error({ err: error, signalId: signal.id }, 'the collection schedule failed on a critical signal');
        });
      return { status, body: { signal_id: written.signalId, deliveries: written.deliveries } };
    } catch (error) {
      span.fail('the signal could not be stored');
      throw error;
    } finally {
      span.end();
    }
  }

  app.get(
    '/v1/signals',
    {
      config: { scope: 'signals' },
      schema: {
        tags: ['signals'],
        summary:
          "List the tenant's signals, newest received first, filtered by severity, type, server and time " +
          '(keyset paging: pass next_before as before)',
        querystring: SignalListQuery,
        response: { 200: SignalList, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin', 'member']);
      const limit = req.query.limit ?? 50;
      const q = req.query;
      const rows = await signals.list(user.tenantId, {
        limit,
        before: parseBefore(q.before),
        severityMin: q.severity_min,
        signalType: q.signal_type,
        serverId: q.server_id,
        since: instant(q.since),
        until: instant(q.until),
      });
      return { signals: rows.map(signalView), next_before: nextBefore(rows, limit, (s) => [s.received_at, s.id]) };
    },
  );

  app.get(
    '/v1/signals/:id',
    {
      config: { scope: 'signals' },
      schema: {
        tags: ['signals'],
        summary: 'Show a signal',
        params: IdParams,
        response: { 200: SignalView, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin', 'member']);
      const row = await signals.find(user.tenantId, req.params.id);
      if (!row) throw notFound('signal');
      return signalView(row);
    },
  );

  app.delete(
    '/v1/signals/:id/payload',
    {
      config: { scope: 'signals' },
      schema: {
        tags: ['signals'],
        summary:
          "Erase a signal's payload (admin; audited): description and identity blanked, its deliveries' stored " +
          'response excerpts and signatures removed, deliveries not yet attempted failed; the signal stays as a tombstone',
        params: IdParams,
        response: { 200: SignalView, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin']);
      const row = await signals.erasePayload(user.tenantId, req.params.id, { actor: user, at: deps.now() });
      if (!row) throw notFound('signal');
      req.log.info({ signalId: row.id }, "signal's payload erased");
      return signalView(row);
    },
  );
};
