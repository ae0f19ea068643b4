// GET /v1/audit: the audit log, newest first (keyset paging like every list). Support staff
// read every tenant's (or one, by tenant_id); a tenant's admins read their own tenant's.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { requireUser } from '../auth/index.ts';
import type { Db } from '../db/index.ts';
import { BeforeParam, nextBefore, parseBefore } from '../kernel/pagination.ts';
import { ErrorResponses } from '../kernel/route-schemas.ts';
import { type AuditEntry, AuditRepository } from './audit-repository.ts';

const AuditQuery = Type.Object({
  tenant_id: Type.Optional(
    Type.String({ maxLength: 64, description: "support staff only; an admin always reads their own tenant's" }),
  ),
  action: Type.Optional(Type.String({ maxLength: 64, examples: ['bundle.show', 'user.create'] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(BeforeParam),
});

const AuditView = Type.Object({
  id: Type.String(),
  at: Type.String(),
  actor_id: Type.String(),
  actor_email: Type.Union([Type.String(), Type.Null()], { description: 'null once that user is removed' }),
  actor_role: Type.String(),
  tenant_id: Type.Union([Type.String(), Type.Null()]),
  action: Type.String(),
  target: Type.String({ description: 'the id read or changed; "*" for a list of every tenant' }),
});

const AuditList = Type.Object({
  entries: Type.Array(AuditView),
  next_before: Type.Union([Type.String(), Type.Null()]),
});

function auditView(e: AuditEntry): Static<typeof AuditView> {
  return {
    id: e.id,
    at: e.at,
    actor_id: e.actor_id,
    actor_email: e.actor_email,
    actor_role: e.actor_role,
    tenant_id: e.tenant_id,
    action: e.action,
    target: e.target,
  };
}

/** What the audit log's routes need of the server. */
export interface AuditDeps {
  db: Db;
}

export const auditRoutes: FastifyPluginAsyncTypebox<AuditDeps> = async (app, deps) => {
  const entries = new AuditRepository(deps.db);
  app.get(
    '/v1/audit',
    {
      schema: {
        tags: ['audit'],
        summary: "The audit log, newest first: support staff every tenant's, an admin their tenant's",
        querystring: AuditQuery,
        response: { 200: AuditList, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, ['support', 'admin']);
      const tenantId = user.role === 'support' ? (req.query.tenant_id ?? null) : user.tenantId;
      const limit = req.query.limit ?? 50;
      const rows = await entries.list(tenantId, {
        action: req.query.action,
        limit,
        before: parseBefore(req.query.before),
      });
      return { entries: rows.map(auditView), next_before: nextBefore(rows, limit, (e) => [e.at, e.id]) };
    },
  );
};
