// Signals: created by agents (POST /v1/signals, agent key: tenant, server_id and server_name
// come from the agent's enrolment), read by the tenant's people. Written through the outbox
// (outbox.ts): the signal and its deliveries in one transaction.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAgent, requireTenantUser } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { nextBefore, parseBefore } from '../pagination.ts';
import { ErrorResponses, IdParams } from '../route-schemas.ts';
import { validTraceparent } from '../tracing/index.ts';
import { CreatedSignal, CreateSignal, SignalList, SignalListQuery, SignalView, signalView } from './schemas.ts';
import { signalFromAgent } from './signal-from-agent.ts';
import { SignalsRepository } from './signals-repository.ts';

/** An RFC 3339 time in the stored form (toISOString), so that text order is time order. */
const instant = (t: string | undefined) => (t === undefined ? undefined : new Date(t).toISOString());

export const signalRoutes: FastifyPluginAsyncTypebox<AppDeps & { wakeDeliveries: () => void }> = async (app, deps) => {
  const signals = new SignalsRepository(deps.db);

  app.post(
    '/v1/signals',
    {
      schema: {
        tags: ['signals'],
        summary:
          'Create a security signal (agent key); it is delivered to every enabled webhook endpoint of the tenant',
        body: CreateSignal,
        response: { 201: CreatedSignal, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const agent = requireAgent(req);
      const signal = signalFromAgent(agent, req.body, deps.now().toISOString());
      // W3C trace context: the agent's traceparent (an invalid one is ignored) is the ingest
      // span's parent; the signal keeps the span's (with tracing off, the agent's), and its
      // deliveries carry it on.
      const span = deps.tracer.startSpan('POST /v1/signals', {
        kind: 'server',
        parent: validTraceparent(req.headers.traceparent),
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
        const deliveries = (await deps.outbox.write(signal)).length;
        span.setAttributes({ 'guard.deliveries': deliveries, 'http.response.status_code': 201 });
        if (deliveries > 0) deps.wakeDeliveries();
        return reply.code(201).send({ signal_id: signal.id, deliveries });
      } catch (error) {
        span.fail('the signal could not be stored');
        throw error;
      } finally {
        span.end();
      }
    },
  );

  app.get(
    '/v1/signals',
    {
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
