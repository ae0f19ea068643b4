// GET /v1/audit: the audit log, newest first (keyset paging like every list). Support staff
// read every tenant's (or one, by tenant_id); a tenant's admins read their own tenant's.
// GET /v1/audit/export?format=csv|jsonl: the same entries, filtered alike, as a download that
// streams page by page (never the whole log in memory); the export is itself audited.

import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { requireUser, type UserPrincipal } from '../auth/index.ts';
import type { Db } from '../db/index.ts';
import { type Before, BeforeParam, nextBefore, parseBefore } from '../kernel/pagination.ts';
import { ErrorResponses } from '../kernel/route-schemas.ts';
import { audit } from './audit.ts';
import { type AuditEntry, AuditRepository } from './audit-repository.ts';
import { csvHeader, EXPORT_CONTENT_TYPES, type ExportFormat, exportFilename, exportLine } from './export-format.ts';

/** Entries read per query while an export streams. */
const EXPORT_PAGE_ROWS = 500;

const AuditQuery = Type.Object({
  tenant_id: Type.Optional(
    Type.String({ maxLength: 64, description: "support staff only; an admin always reads their own tenant's" }),
  ),
  action: Type.Optional(Type.String({ maxLength: 64, examples: ['bundle.show', 'user.create'] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(BeforeParam),
});

const ExportQuery = Type.Object({
  format: Type.Union([Type.Literal('csv'), Type.Literal('jsonl')], {
    description: 'csv: RFC 4180 with a header row; jsonl: one JSON object per line',
  }),
  tenant_id: AuditQuery.properties.tenant_id,
  action: AuditQuery.properties.action,
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
  now: () => Date;
}

/** The tenant whose entries a user reads: support staff any (or every: null), an admin their own. */
function readableTenant(user: UserPrincipal, asked: string | undefined): string | null {
  return user.role === 'support' ? (asked ?? null) : user.tenantId;
}

/** Every entry of the filter, newest first, a page per query. */
async function* exportLines(
  entries: AuditRepository,
  format: ExportFormat,
  tenantId: string | null,
  action: string | undefined,
): AsyncGenerator<string> {
  if (format === 'csv') yield csvHeader();
  let before: Before | undefined;
  for (;;) {
    const rows = await entries.list(tenantId, { action, limit: EXPORT_PAGE_ROWS, before });
    for (const row of rows) yield exportLine(format, auditView(row));
    if (rows.length < EXPORT_PAGE_ROWS) return;
    const last = rows[rows.length - 1];
    before = { at: last.at, id: last.id };
  }
}

export const auditRoutes: FastifyPluginAsyncTypebox<AuditDeps> = async (app, deps) => {
  const entries = new AuditRepository(deps.db);
  app.get(
    '/v1/audit',
    {
      config: { scope: 'audit' },
      schema: {
        tags: ['audit'],
        summary: "The audit log, newest first: support staff every tenant's, an admin their tenant's",
        querystring: AuditQuery,
        response: { 200: AuditList, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, ['support', 'admin']);
      const tenantId = readableTenant(user, req.query.tenant_id);
      const limit = req.query.limit ?? 50;
      const rows = await entries.list(tenantId, {
        action: req.query.action,
        limit,
        before: parseBefore(req.query.before),
      });
      return { entries: rows.map(auditView), next_before: nextBefore(rows, limit, (e) => [e.at, e.id]) };
    },
  );

  app.get(
    '/v1/audit/export',
    {
      config: { scope: 'audit' },
      exposeHeadRoute: false,
      schema: {
        tags: ['audit'],
        summary:
          'Download the audit log (the same filters as GET /v1/audit) as CSV or JSON Lines, newest first; audited as audit.export',
        querystring: ExportQuery,
        response: {
          200: {
            description: 'the entries, streamed; Content-Disposition names a dated file',
            content: {
              'text/csv': { schema: Type.String() },
              'application/jsonl': { schema: Type.String() },
            },
          },
          ...ErrorResponses,
        },
      },
    },
    async (req, reply) => {
      const user = requireUser(req, ['support', 'admin']);
      const { format, action } = req.query;
      const tenantId = readableTenant(user, req.query.tenant_id);
      const at = deps.now();
      const filter = [`format=${format}`, action && `action=${action}`, tenantId && `tenant_id=${tenantId}`];
      await audit(
        deps,
        { userId: user.userId, role: user.role },
        'audit.export',
        filter.filter(Boolean).join(' '),
        tenantId,
      );
      return (
        reply
          .header('content-type', EXPORT_CONTENT_TYPES[format])
          .header('content-disposition', `attachment; filename="${exportFilename(format, tenantId, at)}"`)
          .header('cache-control', 'no-store')
          .header('x-content-type-options', 'nosniff')
          // A stream is sent as it is (no serializer); the schema's string types the documented body.
          .send(Readable.from(exportLines(entries, format, tenantId, action), { objectMode: false }) as never)
      );
    },
  );
};
