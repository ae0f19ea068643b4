// Replay by filter: a dry run counts, a real run starts a replay job (one per endpoint at a
// time), which the feeder re-queues at a bounded rate; its progress is read back and it can
// be cancelled. Starting and cancelling are audited.

import type { TenantUser } from '../../auth/index.ts';
import { ApiError, badRequest, isUniqueViolation, notFound } from '../../kernel/errors.ts';
import { timeOrderedId } from '../../kernel/ids.ts';
import type { WebhookContext } from '../context.ts';
import { findEndpoint } from '../endpoints/endpoint-view.ts';
import { type ReplayView, replayView, type StartReplay } from './schemas.ts';

async function view(ctx: WebhookContext, tenantId: string, id: string): Promise<ReplayView> {
  const r = await ctx.replays.find(tenantId, id);
  if (!r) throw notFound('replay');
  return replayView(r, await ctx.replays.inFlight(r.id));
}

export async function startReplay(ctx: WebhookContext, user: TenantUser, endpointId: string, body: StartReplay) {
  const endpoint = await findEndpoint(ctx, user.tenantId, endpointId);
  const now = ctx.now();
  const since = new Date(body.since);
  // Never past now: deliveries completed later would join the walk as it goes (sent twice,
  // and a replay that never ends).
  const asked = body.until === undefined ? now : new Date(body.until);
  if (Number.isNaN(since.getTime()) || Number.isNaN(asked.getTime()))
    throw badRequest('since and until must be RFC 3339 times', 'invalid_range');
  const until = new Date(Math.min(asked.getTime(), now.getTime()));
  if (since >= until) throw badRequest('since must be before until', 'invalid_range');
  const filter = {
    endpointId: endpoint.id,
    status: body.status,
    since: since.toISOString(),
    until: until.toISOString(),
  };
  const count = await ctx.replays.count(user.tenantId, filter);
  if (body.dry_run)
    return { code: 200, body: { dry_run: true as const, count, since: filter.since, until: filter.until } };
  if (endpoint.enabled !== 1) throw badRequest('the endpoint is disabled: enable it first', 'endpoint_disabled');
  const id = timeOrderedId('rp', now.getTime());
  try {
    await ctx.replays.insert(
      {
        id,
        tenant_id: user.tenantId,
        endpoint_id: endpoint.id,
        requested_by: user.userId,
        status: body.status ?? null,
        since: filter.since,
        until: filter.until,
        state: 'running',
        total: count,
        queued: 0,
        cursor_at: null,
        cursor_id: null,
        fed_at: null,
        created_at: now.toISOString(),
        finished_at: null,
        error: null,
      },
      user,
    );
  } catch (error) {
    if (isUniqueViolation(error))
      throw new ApiError(409, 'replay_running', 'a replay of this endpoint is running: wait for it or cancel it');
    throw error;
  }
  ctx.wakeReplays();
  return { code: 202, body: await view(ctx, user.tenantId, id) };
}

export async function listReplays(ctx: WebhookContext, user: TenantUser, endpointId: string) {
  const endpoint = await findEndpoint(ctx, user.tenantId, endpointId);
  const rows = await ctx.replays.listForEndpoint(user.tenantId, endpoint.id, 20);
  return { replays: await Promise.all(rows.map(async (r) => replayView(r, await ctx.replays.inFlight(r.id)))) };
}

export function showReplay(ctx: WebhookContext, user: TenantUser, id: string): Promise<ReplayView> {
  return view(ctx, user.tenantId, id);
}

/** Stops re-queuing; what is already queued (at most the feeder's window) is still sent. */
export async function cancelReplay(ctx: WebhookContext, user: TenantUser, id: string): Promise<ReplayView> {
  const r = await ctx.replays.find(user.tenantId, id);
  if (!r) throw notFound('replay');
  if (!(await ctx.replays.cancel(user.tenantId, id, ctx.now().toISOString(), user)))
    throw new ApiError(409, 'replay_not_running', `the replay is ${r.state} already`);
  return view(ctx, user.tenantId, id);
}
