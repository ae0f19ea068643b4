// Bundle requests for people (DESIGN §4 contract — bundle requests):
//   POST /v1/servers/{server_id}/bundle-requests   a tenant's admins for their own servers;
//        support staff for any tenant's, only when that tenant allows support-initiated
//        collection (else 403 support_collection_not_allowed, audited). 201 {id, server_id,
//        state: "queued", created_at, expires_at, …}; one open request per server (409
//        request_active names it); a revoked server is 409 server_revoked.
//   GET  /v1/bundle-requests/{id}                  admins and members their tenant's, support any
//   GET  /v1/bundle-requests?server_id=&state=&tenant_id=&limit=&before=   newest first

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BUNDLE_REQUEST_STATES, BundleRequest } from '@guard/contract';
import { Type } from 'typebox';
import { audit } from '../../audit/index.ts';
import { requireUser, type UserPrincipal } from '../../auth/index.ts';
import { ApiError, forbidden, notFound } from '../../kernel/errors.ts';
import { BeforeParam, nextBefore, parseBefore } from '../../kernel/pagination.ts';
import { ErrorResponses, IdParams } from '../../kernel/route-schemas.ts';
import type { RequestsContext } from '../context.ts';
import { requestView } from '../views.ts';

const ServerParams = Type.Object({ server_id: Type.String({ maxLength: 64 }) });

const RequestListQuery = Type.Object({
  tenant_id: Type.Optional(
    Type.String({ maxLength: 64, description: "support staff only; admins and members read their own tenant's" }),
  ),
  server_id: Type.Optional(Type.String({ maxLength: 64 })),
  state: Type.Optional(Type.Union(BUNDLE_REQUEST_STATES.map((s) => Type.Literal(s)))),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(BeforeParam),
});

const RequestList = Type.Object({
  requests: Type.Array(BundleRequest),
  next_before: Type.Union([Type.String(), Type.Null()]),
});

/** The tenant a reader's query is scoped to; null (every tenant) only for support staff. */
function scopeOf(user: UserPrincipal, tenantFilter?: string): string | null {
  if (user.role === 'support') return tenantFilter ?? null;
  if (user.tenantId === null) throw forbidden('this endpoint needs a user of a tenant');
  return user.tenantId;
}

export async function createRequest(ctx: RequestsContext, user: UserPrincipal, serverId: string) {
  const at = ctx.now();
  const agent = await ctx.agents.find(scopeOf(user), serverId);
  if (!agent) throw notFound('server');
  if (user.role === 'support') {
    const settings = await ctx.tenants.settings(agent.tenant_id);
    if (!settings?.allow_support_collection) {
      await audit(ctx, user, 'bundle_request.denied', agent.id, agent.tenant_id);
      throw new ApiError(
        403,
        'support_collection_not_allowed',
        "this tenant does not allow support-initiated collection: its admin can turn it on (allow_support_collection in the tenant's settings)",
      );
    }
  }
  if (agent.revoked_at !== null)
    throw new ApiError(
      409,
      'server_revoked',
      "this server's agent key was revoked: it can no longer be asked for a bundle",
    );
  const { created, row } = await ctx.requests.create(
    { id: agent.id, tenantId: agent.tenant_id },
    { actor: user, at, ttlMs: ctx.ttlMs },
  );
  if (!created)
    throw new ApiError(
      409,
      'request_active',
      `this server already has an open bundle request (${row.id}, ${row.state}); one at a time`,
    );
  ctx.hub.wake(agent.id);
  return requestView({ ...row, hostname: agent.hostname });
}

export const consoleRequestRoutes: FastifyPluginAsyncTypebox<RequestsContext> = async (app, ctx) => {
  app.post(
    '/v1/servers/:server_id/bundle-requests',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['bundle requests'],
        summary:
          'Ask a server for a support bundle (console push): its admins, or support staff when the tenant allows ' +
          'support-initiated collection (else 403, audited). Its agent collects and uploads with trigger console_push',
        params: ServerParams,
        response: { 201: BundleRequest, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const user = requireUser(req, ['admin', 'support']);
      const view = await createRequest(ctx, user, req.params.server_id);
      req.log.info({ requestId: view.id, serverId: view.server_id, by: user.role }, 'bundle requested');
      return reply.code(201).send(view);
    },
  );

  app.get(
    '/v1/bundle-requests/:id',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['bundle requests'],
        summary: 'A bundle request: its state, a time per state, bundle_id when done, error and step when failed',
        params: IdParams,
        response: { 200: BundleRequest, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member', 'support']);
      const row = await ctx.requests.find(scopeOf(user), req.params.id, ctx.now());
      if (!row) throw notFound('bundle request');
      return requestView(row);
    },
  );

  app.get(
    '/v1/bundle-requests',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['bundle requests'],
        summary: 'Bundle requests, newest first (admins and members their tenant’s; support staff every tenant or one)',
        querystring: RequestListQuery,
        response: { 200: RequestList, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member', 'support']);
      const limit = req.query.limit ?? 50;
      const rows = await ctx.requests.list(
        scopeOf(user, req.query.tenant_id),
        { limit, before: parseBefore(req.query.before), agentId: req.query.server_id, state: req.query.state },
        ctx.now(),
      );
      return { requests: rows.map(requestView), next_before: nextBefore(rows, limit, (r) => [r.created_at, r.id]) };
    },
  );
};
