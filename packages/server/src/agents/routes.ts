// The tenant's enrolled agents, for its admins (docs/guard-server.md, guard-agent-enroll.md):
//   GET  /v1/agents               newest first, paged like every list (pagination.ts)
//   POST /v1/agents/{id}/revoke   the agent's API key stops working at once (idempotent, audited)
//   GET  /v1/servers              the same agents as the console's Servers page shows them, for
//                                 admins and members, and support staff (every tenant, or one by
//                                 ?tenant_id=): DESIGN §4 fields (last_seen_at, online), what the
//                                 daemon's heartbeat reports (with its detectors and spool), when
//                                 its newest signal came, and the open bundle request
// An agent is never deleted: its bundles and signals keep pointing at it.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireTenantUser, requireUser } from '../auth/index.ts';
import type { Db } from '../db/index.ts';
import { notFound } from '../kernel/errors.ts';
import { nextBefore, parseBefore } from '../kernel/pagination.ts';
import { ErrorResponses, IdParams } from '../kernel/route-schemas.ts';
import { AgentsRepository } from './agents-repository.ts';
import { AgentList, AgentListQuery, AgentView, agentView, ServerList, ServerListQuery, serverView } from './schemas.ts';

/** What the agents capability needs of the server. */
export interface AgentsDeps {
  db: Db;
  now: () => Date;
}

export const agentRoutes: FastifyPluginAsyncTypebox<AgentsDeps> = async (app, deps) => {
  const agents = new AgentsRepository(deps.db);

  app.get(
    '/v1/agents',
    {
      config: { scope: 'servers' },
      schema: {
        tags: ['agents'],
        summary: "List the tenant's enrolled agents, newest first (admin)",
        querystring: AgentListQuery,
        response: { 200: AgentList, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin']);
      const limit = req.query.limit ?? 50;
      const rows = await agents.list(user.tenantId, { limit, before: parseBefore(req.query.before) });
      return { agents: rows.map(agentView), next_before: nextBefore(rows, limit, (a) => [a.enrolled_at, a.id]) };
    },
  );

  app.get(
    '/v1/servers',
    {
      config: { scope: 'servers' },
      schema: {
        tags: ['agents'],
        summary:
          "The tenant's servers (enrolled agents), newest enrolled first, with last seen, online, the daemon's " +
          'heartbeat (detectors, spool), the newest signal and the open bundle request (admins, members; support ' +
          'staff every tenant or one)',
        querystring: ServerListQuery,
        response: { 200: ServerList, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member', 'support']);
      const tenantId = user.role === 'support' ? (req.query.tenant_id ?? null) : user.tenantId;
      const limit = req.query.limit ?? 50;
      const rows = await agents.list(tenantId, { limit, before: parseBefore(req.query.before) });
      const now = deps.now();
      const ids = rows.map((r) => r.id);
      const open = await agents.openRequests(ids, now);
      const lastSignals = await agents.lastSignals(tenantId, ids);
      return {
        servers: rows.map((row) => serverView(row, now, open.get(row.id), lastSignals.get(row.id) ?? null)),
        next_before: nextBefore(rows, limit, (a) => [a.enrolled_at, a.id]),
      };
    },
  );

  app.post(
    '/v1/agents/:id/revoke',
    {
      config: { scope: 'servers' },
      schema: {
        tags: ['agents'],
        summary:
          "Revoke an agent's API key (admin): every later call with it is refused with 401. Idempotent: " +
          'revoking again answers the same record',
        params: IdParams,
        response: { 200: AgentView, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin']);
      const { id } = req.params;
      const { row, changed } = await agents.revoke(user.tenantId, id, { actor: user, at: deps.now() });
      if (!row) throw notFound('agent');
      if (changed) req.log.info({ agentId: id, tenantId: user.tenantId }, 'agent key revoked');
      return agentView(row);
    },
  );
};
