// Bundle batches (fleets: issue 24 item 4), requests made together for many servers:
//   POST /v1/bundle-batches        {server_ids: […]} or {filter: {environment?, agent_version?,
//        offline_since?}}, dry_run?; a tenant's admins for their servers, support staff for the
//        tenant they name (tenant_id) when it allows support-initiated collection (else 403
//        support_collection_not_allowed, audited), as for one request. 201 the batch: one queued
//        request per server, each with batch_id, and the servers skipped with the reason
//        (selection.ts); 400 empty_selection when no request would be made, too_many_servers
//        past MAX_BATCH_SERVERS. One audit entry for the batch.
//   GET  /v1/bundle-batches/{id}   the batch, progress by state, its requests (hostname, bundle_id)
//   GET  /v1/bundle-batches?tenant_id=&limit=&before=   newest first

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import { isOnline } from '../../agents/index.ts';
import { audit } from '../../audit/index.ts';
import { requireUser, type UserPrincipal } from '../../auth/index.ts';
import type { BundleBatchTable } from '../../db/index.ts';
import { ApiError, badRequest, forbidden, notFound } from '../../kernel/errors.ts';
import { nextBefore, parseBefore } from '../../kernel/pagination.ts';
import { ErrorResponses, IdParams } from '../../kernel/route-schemas.ts';
import type { RequestsContext } from '../context.ts';
import { requestView } from '../views.ts';
import { BatchesRepository, type BatchRead, progressOf } from './batches-repository.ts';
import { BatchList, BatchListQuery, BatchPreview, BundleBatch, CreateBatchBody } from './schemas.ts';
import {
  type BatchFilter,
  MAX_BATCH_SERVERS,
  offlineSinceInstant,
  type Selection,
  type Skipped,
  selectByFilter,
  selectByIds,
} from './selection.ts';

type CreateBody = Static<typeof CreateBatchBody>;

/** The tenant a reader's query is scoped to; null (every tenant) only for support staff. */
function scopeOf(user: UserPrincipal, tenantFilter?: string): string | null {
  if (user.role === 'support') return tenantFilter ?? null;
  if (user.tenantId === null) throw forbidden('this endpoint needs a user of a tenant');
  return user.tenantId;
}

function filterOf(row: BundleBatchTable): BatchFilter | null {
  return row.filter === null ? null : (JSON.parse(row.filter) as BatchFilter);
}

function batchView(read: BatchRead): Static<typeof BundleBatch> {
  const { batch, requests } = read;
  return {
    id: batch.id,
    tenant_id: batch.tenant_id,
    created_at: batch.created_at,
    created_by: batch.created_by,
    created_by_role: batch.created_by_role,
    filter: filterOf(batch),
    progress: progressOf(requests),
    requests: requests.map(requestView),
    skipped: JSON.parse(batch.skipped) as Skipped[],
  };
}

/** The tenant the batch is for: the admin's own; the one support staff name, if it allows them. */
async function batchTenant(ctx: RequestsContext, user: UserPrincipal, body: CreateBody): Promise<string> {
  if (user.role !== 'support') {
    const own = scopeOf(user) as string;
    if (body.tenant_id !== undefined && body.tenant_id !== own)
      throw forbidden("tenant_id is for support staff: an admin asks their own tenant's servers");
    return own;
  }
  if (body.tenant_id === undefined)
    throw badRequest('support staff name the tenant whose servers to ask (tenant_id)', 'tenant_required');
  const settings = await ctx.tenants.settings(body.tenant_id);
  if (!settings) throw notFound('tenant');
  if (!settings.allow_support_collection) {
    if (!body.dry_run) await audit(ctx, user, 'bundle_request.denied', 'bundle_batch', body.tenant_id);
    throw new ApiError(
      403,
      'support_collection_not_allowed',
      "this tenant does not allow support-initiated collection: its admin can turn it on (allow_support_collection in the tenant's settings)",
    );
  }
  return body.tenant_id;
}

async function select(batches: BatchesRepository, tenantId: string, body: CreateBody, at: Date): Promise<Selection> {
  if (body.server_ids !== undefined) {
    const ids = [...new Set(body.server_ids)];
    const found = await batches.serversByIds(tenantId, ids);
    return selectByIds(ids, found, await batches.openRequests([...found.keys()], at));
  }
  const filter = body.filter as BatchFilter;
  let offlineBefore: Date | undefined;
  if (filter.offline_since !== undefined) {
    const instant = offlineSinceInstant(filter.offline_since, at);
    if (instant instanceof Error) throw badRequest(instant.message, 'invalid_filter');
    offlineBefore = instant;
  }
  const matched = await batches.serversMatching(tenantId, filter, offlineBefore);
  const open = await batches.openRequests(
    matched.map((a) => a.id),
    at,
  );
  return selectByFilter(matched, filter, (a) => isOnline(a, at), open);
}

function emptySelection(body: CreateBody, skipped: Skipped[]): ApiError {
  if (skipped.length === 0)
    return badRequest(
      body.server_ids !== undefined ? 'server_ids is empty' : 'no server of this tenant matches the filter',
      'empty_selection',
    );
  const counts = new Map<string, number>();
  for (const s of skipped) counts.set(s.reason, (counts.get(s.reason) ?? 0) + 1);
  const reasons = [...counts].map(([reason, n]) => `${n} ${reason}`).join(', ');
  return badRequest(`no server left to ask: every selected server was skipped (${reasons})`, 'empty_selection');
}

export const batchRoutes: FastifyPluginAsyncTypebox<RequestsContext> = async (app, ctx) => {
  const batches = new BatchesRepository(ctx.db, ctx.requests);

  app.post(
    '/v1/bundle-batches',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['bundle requests'],
        summary:
          `Ask many servers for a support bundle at once (fleets): by server_ids (at most ${MAX_BATCH_SERVERS}) or ` +
          'by filter; one request per server sharing batch_id, the others skipped with a reason. Who may: as for one ' +
          'request. dry_run: 200 with what would be done',
        body: CreateBatchBody,
        response: { 200: BatchPreview, 201: BundleBatch, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const user = requireUser(req, ['admin', 'support']);
      const body = req.body;
      if ((body.server_ids === undefined) === (body.filter === undefined))
        throw badRequest('give either server_ids or filter (one of them)', 'invalid_selection');
      if (body.server_ids?.length === 0) throw emptySelection(body, []);
      const tenantId = await batchTenant(ctx, user, body);
      const at = ctx.now();
      const { chosen, skipped } = await select(batches, tenantId, body, at);
      if (chosen.length > MAX_BATCH_SERVERS)
        throw badRequest(
          `the filter matches ${chosen.length} servers to ask; a batch asks at most ${MAX_BATCH_SERVERS}: narrow it`,
          'too_many_servers',
        );
      const filter = body.filter ?? null;
      if (body.dry_run)
        return reply.code(200).send({
          dry_run: true as const,
          filter,
          servers: chosen.map((a) => ({
            server_id: a.id,
            hostname: a.hostname,
            environment: a.environment,
            agent_version: a.agent_version,
          })),
          skipped,
        });
      if (chosen.length === 0) throw emptySelection(body, skipped);
      const created = await batches.create({ tenantId, actor: user, at, ttlMs: ctx.ttlMs, filter, chosen, skipped });
      if (!created) throw emptySelection(body, skipped);
      for (const r of created.requests) ctx.hub.wake(r.agent_id);
      req.log.info(
        { batchId: created.batch.id, requests: created.requests.length, skipped: skipped.length, by: user.role },
        'bundle batch requested',
      );
      return reply.code(201).send(batchView(created));
    },
  );

  app.get(
    '/v1/bundle-batches/:id',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['bundle requests'],
        summary: "A bundle batch: progress by state, each server's request (bundle_id when done), the skipped servers",
        params: IdParams,
        response: { 200: BundleBatch, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member', 'support']);
      const read = await batches.find(scopeOf(user), req.params.id, ctx.now());
      if (!read) throw notFound('bundle batch');
      return batchView(read);
    },
  );

  app.get(
    '/v1/bundle-batches',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['bundle requests'],
        summary: 'Bundle batches, newest first, with their progress (admins and members their tenant’s; support any)',
        querystring: BatchListQuery,
        response: { 200: BatchList, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member', 'support']);
      const limit = req.query.limit ?? 50;
      const rows = await batches.list(
        scopeOf(user, req.query.tenant_id),
        { limit, before: parseBefore(req.query.before) },
        ctx.now(),
      );
      const progress = await batches.progress(rows.map((r) => r.id));
      return {
        batches: rows.map((r) => ({
          id: r.id,
          tenant_id: r.tenant_id,
          created_at: r.created_at,
          created_by: r.created_by,
          created_by_role: r.created_by_role,
          filter: filterOf(r),
          progress: progress.get(r.id) as ReturnType<typeof progressOf>,
          skipped_count: (JSON.parse(r.skipped) as unknown[]).length,
        })),
        next_before: nextBefore(rows, limit, (r) => [r.created_at, r.id]),
      };
    },
  );
};
