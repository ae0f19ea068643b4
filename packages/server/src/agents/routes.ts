// The tenant's enrolled agents, for its admins (docs/guard-server.md, guard-agent-enroll.md):
//   GET  /v1/agents               newest first, paged like every list (pagination.ts)
//   POST /v1/agents/{id}/revoke   the agent's API key stops working at once (idempotent, audited)
// An agent is never deleted: its bundles and signals keep pointing at it.

import { ApiErrorBody } from '@guard/contract';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requireUser } from '../auth/principal.ts';
import type { AgentTable } from '../db/tables.ts';
import type { AppDeps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { BeforeParam, beforeFilter, cursorOf, parseBefore } from '../pagination.ts';
import { audit } from '../support/audit.ts';

const AgentView = Type.Object({
  id: Type.String(),
  hostname: Type.String({ description: 'as the agent reported it at enrolment' }),
  environment: Type.String(),
  agent_version: Type.String({ description: 'at enrolment' }),
  enrolled_at: Type.String(),
  revoked_at: Type.Union([Type.String(), Type.Null()], {
    description: 'when its API key was revoked (it is refused from then on), or null',
  }),
});
const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(BeforeParam),
});
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const errors = { '4xx': ApiErrorBody };

/** What an admin sees of an agent: never its key or the key's hash. */
function agentView(row: AgentTable) {
  return {
    id: row.id,
    hostname: row.hostname,
    environment: row.environment,
    agent_version: row.agent_version,
    enrolled_at: row.enrolled_at,
    revoked_at: row.revoked_at,
  };
}

export async function agentRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  app.get(
    '/v1/agents',
    {
      schema: {
        tags: ['agents'],
        summary: "List the tenant's enrolled agents, newest first (admin)",
        querystring: ListQuery,
        response: {
          200: Type.Object({ agents: Type.Array(AgentView), next_before: Type.Union([Type.String(), Type.Null()]) }),
          ...errors,
        },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin']);
      const q = req.query as { limit?: number; before?: string };
      const limit = q.limit ?? 50;
      let query = db
        .selectFrom('agents')
        .selectAll()
        .where('tenant_id', '=', user.tenantId as string)
        .orderBy('enrolled_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit);
      const before = parseBefore(q.before);
      if (before) query = query.where(beforeFilter('enrolled_at', 'id', before));
      const rows = await query.execute();
      const last = rows.at(-1);
      return {
        agents: rows.map(agentView),
        next_before: rows.length === limit && last ? cursorOf(last.enrolled_at, last.id) : null,
      };
    },
  );

  app.post(
    '/v1/agents/:id/revoke',
    {
      schema: {
        tags: ['agents'],
        summary:
          "Revoke an agent's API key (admin): every later call with it is refused with 401. Idempotent: " +
          'revoking again answers the same record',
        params: IdParams,
        response: { 200: AgentView, ...errors },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin']);
      const tenantId = user.tenantId as string;
      const { id } = req.params as { id: string };
      const now = deps.now();
      // The revocation and its audit record commit together; a repeat changes and records nothing.
      const { row, changed } = await db.transaction().execute(async (trx) => {
        const revoked = await trx
          .updateTable('agents')
          .set({ revoked_at: now.toISOString() })
          .where('id', '=', id)
          .where('tenant_id', '=', tenantId)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        const changed = Number(revoked.numUpdatedRows) > 0;
        if (changed) await audit({ db: trx, now: () => now }, user, 'agent.revoke', id, tenantId);
        const row = await trx
          .selectFrom('agents')
          .selectAll()
          .where('id', '=', id)
          .where('tenant_id', '=', tenantId)
          .executeTakeFirst();
        return { row, changed };
      });
      if (!row) throw notFound('agent');
      if (changed) req.log.info({ agentId: id, tenantId }, 'agent key revoked');
      return agentView(row);
    },
  );
}
