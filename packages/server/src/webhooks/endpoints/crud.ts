// Create, list, show, edit and delete a tenant's endpoints. The secret is generated here and
// returned once, at creation; the secret and the custom headers are stored sealed.

import { newId, type TenantUser } from '../../auth/index.ts';
import type { WebhookEndpointTable } from '../../db/index.ts';
import { badRequest, notFound } from '../../kernel/errors.ts';
import { seal } from '../../kernel/secret-box.ts';
import type { WebhookContext } from '../context.ts';
import { authFromInput, type EndpointAuth, openAuth, sealAuth } from '../endpoint-auth.ts';
import { openHeaders, sealHeaders } from '../endpoint-headers.ts';
import { validateEndpointAddress, validateEndpointUrl, validateHeaders } from '../endpoint-rules.ts';
import { openClientKey, tlsChanges } from '../endpoint-tls.ts';
import type { EndpointChanges } from '../endpoints-repository.ts';
import { newWebhookSecret } from '../envelope.ts';
import { maskOf, NEW_ENDPOINT_DEFAULTS } from '../subscriptions.ts';
import { findEndpoint, view } from './endpoint-view.ts';
import type { CreateEndpoint, EndpointView, UpdateEndpoint } from './schemas.ts';

/** The subscription columns a create or edit sets (only the fields it names). */
function subscriptionChanges(body: CreateEndpoint | UpdateEndpoint): Partial<WebhookEndpointTable> {
  const changes: Partial<WebhookEndpointTable> = {};
  if (body.event_types !== undefined) changes.event_mask = maskOf(body.event_types);
  if (body.min_severity !== undefined) changes.min_severity = body.min_severity;
  if (body.signal_types !== undefined)
    changes.signal_types = body.signal_types === null ? null : JSON.stringify(body.signal_types);
  if (body.rate_limit !== undefined) changes.rate_limit = body.rate_limit;
  return changes;
}

/** The rules JSON Schema cannot say: an https URL to an allowed address, well-formed headers. */
function checkEndpointInput(ctx: WebhookContext, body: { url?: string; headers?: Record<string, string> }): void {
  if (body.url !== undefined) {
    const problem = validateEndpointUrl(body.url);
    if (problem) throw badRequest(problem, 'invalid_url');
    const blocked = validateEndpointAddress(body.url, ctx.allowPrivate);
    if (blocked) throw badRequest(blocked, 'blocked_address');
  }
  if (body.headers !== undefined) {
    const problem = validateHeaders(body.headers);
    if (problem) throw badRequest(problem, 'invalid_headers');
  }
}

/**
 * The TLS and auth columns a create or edit sets, checked. An endpoint authenticates one way:
 * `auth`, or a custom Authorization header, never both (the one would overwrite the other).
 */
function transportChanges(
  ctx: WebhookContext,
  id: string,
  body: CreateEndpoint | UpdateEndpoint,
  existing: WebhookEndpointTable | undefined,
): { changes: Partial<WebhookEndpointTable>; auth: EndpointAuth | null } {
  const currentKey = existing?.tls_client_key_sealed
    ? openClientKey(ctx.secretKey, id, existing.tls_client_key_sealed)
    : undefined;
  const changes: Partial<WebhookEndpointTable> = tlsChanges(ctx.secretKey, id, body, currentKey);
  const current = existing ? openAuth(ctx.secretKey, id, existing.auth_sealed) : null;
  let auth = current;
  if (body.auth !== undefined) {
    auth = body.auth === null ? null : authFromInput(body.auth, current, ctx.allowPrivate);
    changes.auth_sealed = auth === null ? null : sealAuth(ctx.secretKey, id, auth);
  }
  const headers = body.headers ?? (existing ? openHeaders(ctx.secretKey, id, existing.headers) : {});
  if (auth && Object.keys(headers).some((name) => name.toLowerCase() === 'authorization'))
    throw badRequest(
      `the endpoint has ${auth.type === 'basic' ? 'Basic' : 'OAuth2'} authentication and a custom Authorization header: keep one of them`,
      'auth_conflict',
    );
  return { changes, auth };
}

export async function createEndpoint(ctx: WebhookContext, user: TenantUser, body: CreateEndpoint) {
  checkEndpointInput(ctx, body);
  const id = newId('we');
  const transport = transportChanges(ctx, id, body, undefined);
  const secret = newWebhookSecret();
  const now = ctx.now().toISOString();
  const row = await ctx.endpoints.insert(user.tenantId, {
    id,
    name: body.name,
    url: body.url,
    headers: sealHeaders(ctx.secretKey, id, body.headers ?? {}),
    secret_sealed: seal(ctx.secretKey, secret, id),
    enabled: 1,
    disabled_reason: null,
    failing_since: null,
    ...NEW_ENDPOINT_DEFAULTS,
    ...subscriptionChanges(body),
    ...transport.changes,
    created_at: now,
    updated_at: now,
  });
  return { ...(await view(ctx, row, user)), headers: body.headers ?? {}, secret };
}

export async function listEndpoints(ctx: WebhookContext, user: TenantUser) {
  const rows = await ctx.endpoints.list(user.tenantId);
  return { endpoints: await Promise.all(rows.map((e) => view(ctx, e, user))) };
}

export async function showEndpoint(ctx: WebhookContext, user: TenantUser, id: string): Promise<EndpointView> {
  return view(ctx, await findEndpoint(ctx, user.tenantId, id), user);
}

export async function updateEndpoint(
  ctx: WebhookContext,
  user: TenantUser,
  id: string,
  body: UpdateEndpoint,
): Promise<EndpointView> {
  checkEndpointInput(ctx, body);
  const existing = await findEndpoint(ctx, user.tenantId, id);
  const updatedAt = ctx.now().toISOString();
  const changes: EndpointChanges = {
    updated_at: updatedAt,
    ...transportChanges(ctx, existing.id, body, existing).changes,
  };
  if (body.name !== undefined) changes.name = body.name;
  if (body.url !== undefined) changes.url = body.url;
  if (body.headers !== undefined) changes.headers = sealHeaders(ctx.secretKey, existing.id, body.headers);
  Object.assign(changes, subscriptionChanges(body));
  if (body.enabled !== undefined) {
    changes.enabled = body.enabled ? 1 : 0;
    // Re-enabling starts a fresh health record; disabling by hand says so.
    changes.disabled_reason = body.enabled ? null : 'disabled by an administrator';
    changes.failing_since = null;
    changes.failure_streak = 0;
    changes.failing_alerted = 0;
  }
  // Disabling stops delivery at once, as the automatic disabling does: the deliveries waiting
  // for their next attempt are failed now (an admin may redeliver them once the endpoint is
  // enabled again).
  const disabling = body.enabled === false && existing.enabled === 1;
  await ctx.endpoints.update(
    user.tenantId,
    existing.id,
    changes,
    disabling ? { at: updatedAt, error: 'the endpoint was disabled' } : undefined,
  );
  return view(ctx, { ...existing, ...changes }, user);
}

export async function deleteEndpoint(ctx: WebhookContext, user: TenantUser, id: string): Promise<void> {
  if (!(await ctx.endpoints.delete(user.tenantId, id))) throw notFound('webhook endpoint');
}
