// Signals: created by agents (POST /v1/signals, agent key: tenant, server_id and server_name
// come from the agent's enrolment), read by the tenant's people. Written through the outbox
// (outbox.ts): the signal and its deliveries in one transaction.

import { ApiErrorBody } from '@guard/contract';
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { type Principal, requireAgent, requireUser } from '../auth/principal.ts';
import type { SignalTable } from '../db/tables.ts';
import type { AppDeps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { timeOrderedId } from '../ids.ts';
import { BeforeParam, beforeFilter, cursorOf, parseBefore } from '../pagination.ts';

export const CreateSignal = Type.Object(
  {
    signal_type: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[a-z0-9][a-z0-9_.-]*$',
      examples: ['sudo_command_executed'],
    }),
    severity: Type.Integer({ minimum: 1, maximum: 5, description: '1 (info) to 5 (critical)' }),
    description: Type.String({ minLength: 1, maxLength: 4096 }),
    identity_id: Type.String({ maxLength: 200 }),
    identity_name: Type.String({ maxLength: 200 }),
    environment: Type.Optional(Type.String({ maxLength: 100, description: "defaults to the agent's environment tag" })),
    created_at: Type.Optional(Type.String({ format: 'date-time', description: 'defaults to the time received' })),
  },
  { additionalProperties: false },
);
export type CreateSignal = Static<typeof CreateSignal>;

export const SignalView = Type.Object({
  signal_id: Type.String(),
  tenant_id: Type.String(),
  signal_type: Type.String(),
  severity: Type.Integer(),
  description: Type.String(),
  server_id: Type.String(),
  server_name: Type.String(),
  identity_id: Type.String(),
  identity_name: Type.String(),
  environment: Type.String(),
  created_at: Type.String(),
  received_at: Type.String(),
});

export function signalView(s: SignalTable) {
  return {
    signal_id: s.id,
    tenant_id: s.tenant_id,
    signal_type: s.signal_type,
    severity: s.severity,
    description: s.description,
    server_id: s.server_id,
    server_name: s.server_name,
    identity_id: s.identity_id,
    identity_name: s.identity_name,
    environment: s.environment,
    created_at: s.created_at,
    received_at: s.received_at,
  };
}

type AgentPrincipal = Extract<Principal, { kind: 'agent' }>;

/** The signal row an agent's POST /v1/signals creates: server id, name and environment come from its enrolment. */
export function signalFromAgent(
  agent: Pick<AgentPrincipal, 'agentId' | 'tenantId' | 'hostname' | 'environment'>,
  body: CreateSignal,
  now: string,
): SignalTable {
  return {
    id: timeOrderedId('sig'),
    tenant_id: agent.tenantId,
    agent_id: agent.agentId,
    server_id: agent.agentId,
    server_name: agent.hostname,
    signal_type: body.signal_type,
    severity: body.severity,
    description: body.description,
    identity_id: body.identity_id,
    identity_name: body.identity_name,
    environment: body.environment ?? agent.environment,
    created_at: body.created_at ? new Date(body.created_at).toISOString() : now,
    received_at: now,
    is_test: 0,
  };
}

export async function signalRoutes(
  app: FastifyInstance,
  deps: AppDeps & { wakeDeliveries: () => void },
): Promise<void> {
  const { db } = deps;
  const errors = { '4xx': ApiErrorBody };

  app.post(
    '/v1/signals',
    {
      schema: {
        tags: ['signals'],
        summary:
          'Create a security signal (agent key); it is delivered to every enabled webhook endpoint of the tenant',
        body: CreateSignal,
        response: { 201: Type.Object({ signal_id: Type.String(), deliveries: Type.Integer() }), ...errors },
      },
    },
    async (req, reply) => {
      const agent = requireAgent(req);
      const signal = signalFromAgent(agent, req.body as CreateSignal, deps.now().toISOString());
      const deliveries = (await deps.outbox.write(signal)).length;
      if (deliveries > 0) deps.wakeDeliveries();
      return reply.code(201).send({ signal_id: signal.id, deliveries });
    },
  );

  app.get(
    '/v1/signals',
    {
      schema: {
        tags: ['signals'],
        summary: "List the tenant's signals, newest first",
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          before: Type.Optional(BeforeParam),
        }),
        response: {
          200: Type.Object({ signals: Type.Array(SignalView), next_before: Type.Union([Type.String(), Type.Null()]) }),
          ...errors,
        },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member']);
      const q = req.query as { limit?: number; before?: string };
      const limit = q.limit ?? 50;
      let query = db
        .selectFrom('signals')
        .selectAll()
        .where('tenant_id', '=', user.tenantId as string)
        .where('is_test', '=', 0)
        .orderBy('received_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit);
      const before = parseBefore(q.before);
      if (before) query = query.where(beforeFilter('received_at', 'id', before));
      const rows = await query.execute();
      const last = rows.at(-1);
      return {
        signals: rows.map(signalView),
        next_before: rows.length === limit && last ? cursorOf(last.received_at, last.id) : null,
      };
    },
  );

  app.get(
    '/v1/signals/:id',
    {
      schema: {
        tags: ['signals'],
        summary: 'Show a signal',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: SignalView, ...errors },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member']);
      const { id } = req.params as { id: string };
      const row = await db
        .selectFrom('signals')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', user.tenantId as string)
        .executeTakeFirst();
      if (!row) throw notFound('signal');
      return signalView(row);
    },
  );
}
