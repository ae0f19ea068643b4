// An endpoint's deliveries, one delivery with its attempts, and an admin's redelivery.

import type { TenantUser } from '../../auth/index.ts';
import type { WebhookDeliveryTable } from '../../db/index.ts';
import { badRequest, notFound } from '../../kernel/errors.ts';
import { nextBefore, parseBefore } from '../../kernel/pagination.ts';
import { open } from '../../kernel/secret-box.ts';
import type { WebhookContext } from '../context.ts';
import { deliveryStatus } from '../delivery-status.ts';
import { maskHeaders, maskUrl, openHeaders } from '../endpoint-headers.ts';
import { findEndpoint } from '../endpoints/endpoint-view.ts';
import { buildAttempt } from '../envelope.ts';
import { readResponseHeaders } from '../response-headers.ts';
import { eventTypeOf } from '../subscriptions.ts';
import { type DeliveryListQuery, type DeliveryLogQuery, type DeliveryView, deliveryView } from './schemas.ts';

async function findDelivery(ctx: WebhookContext, tenantId: string, id: string): Promise<WebhookDeliveryTable> {
  const row = await ctx.deliveries.find(tenantId, id);
  if (!row) throw notFound('delivery');
  return row;
}

export async function listDeliveries(ctx: WebhookContext, user: TenantUser, endpointId: string, q: DeliveryListQuery) {
  const endpoint = await findEndpoint(ctx, user.tenantId, endpointId);
  const limit = q.limit ?? 50;
  const rows = await ctx.deliveries.listForEndpoint(endpoint.tenant_id, endpoint.id, {
    state: q.state,
    status: q.status,
    limit,
    before: parseBefore(q.before),
  });
  return { deliveries: rows.map(deliveryView), next_before: nextBefore(rows, limit, (d) => [d.created_at, d.id]) };
}

/**
 * The tenant's delivery log: every endpoint's deliveries, newest created first, searched by
 * signal, endpoint, status word and creation time; each with its endpoint's name and what it
 * carries. Endpoint and signal ids that are not the tenant's find nothing (never a 404, which
 * would tell that they exist elsewhere).
 */
export async function deliveryLog(ctx: WebhookContext, user: TenantUser, q: DeliveryLogQuery) {
  const limit = q.limit ?? 50;
  const rows = await ctx.deliveries.listForTenant(user.tenantId, {
    signalId: q.signal_id,
    endpointId: q.endpoint_id,
    status: q.status,
    since: instant(q.since),
    until: instant(q.until),
    limit,
    before: parseBefore(q.before),
  });
  const { endpoints, signals } = await ctx.deliveries.logLabels(user.tenantId, rows);
  return {
    deliveries: rows.map((d) => {
      const signal = signals.get(d.signal_id);
      return {
        ...deliveryView(d),
        endpoint_name: endpoints.get(d.endpoint_id) ?? '',
        event_type: signal ? eventTypeOf(signal) : ('signal_created' as const),
      };
    }),
    next_before: nextBefore(rows, limit, (d) => [d.created_at, d.id]),
  };
}

const instant = (t: string | undefined) => (t === undefined ? undefined : new Date(t).toISOString());

export async function showDelivery(ctx: WebhookContext, user: TenantUser, id: string) {
  const found = await ctx.deliveries.findWithAttempts(user.tenantId, id);
  if (!found) throw notFound('delivery');
  return { ...deliveryView(found.delivery), attempt_log: found.attempts };
}

export async function redeliver(ctx: WebhookContext, user: TenantUser, id: string): Promise<DeliveryView> {
  const d = await findDelivery(ctx, user.tenantId, id);
  if (d.state === 'delivering') throw badRequest('this delivery is being attempted right now', 'delivery_in_flight');
  const endpoint = await findEndpoint(ctx, user.tenantId, d.endpoint_id);
  if (endpoint.enabled !== 1) throw badRequest('the endpoint is disabled: enable it first', 'endpoint_disabled');
  const changes = await ctx.deliveries.redeliver(user.tenantId, d.id, ctx.now().toISOString());
  ctx.wakeDeliveries();
  return deliveryView({ ...d, ...changes });
}

/** A signal's delivery to each endpoint (the signal page of the console). */
export async function signalDeliveries(ctx: WebhookContext, user: TenantUser, signalId: string) {
  if (!(await ctx.deliveries.signal(user.tenantId, signalId))) throw notFound('signal');
  const rows = await ctx.deliveries.listForSignal(user.tenantId, signalId);
  return {
    deliveries: rows.map((d) => ({
      endpoint_id: d.endpoint_id,
      endpoint_name: d.endpoint_name,
      delivery_id: d.id,
      status: deliveryStatus(d),
      state: d.state,
      attempts: d.attempts,
      last_status: d.last_status,
      last_error: d.last_error,
      completed_at: d.completed_at,
      next_attempt_at: d.state === 'pending' ? d.next_attempt_at : null,
    })),
  };
}

/**
 * One attempt with the request as it was sent. The body is not stored: buildAttempt is
 * deterministic for a send time, so it is rebuilt from the signal, the delivery and the
 * attempt's started_at (the time the worker stamped on it). Guard-Signature, webhook-signature
 * and traceparent are the ones stored with the attempt, as sent (during a secret rotation: both entries),
 * whatever the endpoint's secret is now; attempts recorded before they were stored are
 * signed again with the current secret. Once the signal's payload was erased, the body is
 * rebuilt from what is left and no signature is shown (payload_erased). URL and custom
 * headers are the endpoint's current ones; their values are masked for members, as on the
 * endpoint view.
 */
export async function showAttempt(ctx: WebhookContext, user: TenantUser, id: string, n: number) {
  const d = await findDelivery(ctx, user.tenantId, id);
  const found = await ctx.deliveries.attempt(user.tenantId, d.id, n);
  if (!found) throw notFound('attempt');
  const { signature, standard_signature, traceparent, response_headers, ...attempt } = found;
  const signal = await ctx.deliveries.signal(user.tenantId, d.signal_id);
  if (!signal) throw notFound('signal');
  const endpoint = await findEndpoint(ctx, user.tenantId, d.endpoint_id);
  const custom = openHeaders(ctx.secretKey, endpoint.id, endpoint.headers);
  const secret = open(ctx.secretKey, endpoint.secret_sealed, endpoint.id);
  const sent = buildAttempt(
    signal,
    d,
    { secrets: [secret], headers: custom, traceparent },
    ctx.consoleBaseUrl(),
    new Date(attempt.started_at),
  );
  const erased = signal.erased_at != null;
  if (erased) {
    delete sent.headers['guard-signature'];
    delete sent.headers['webhook-signature'];
  } else {
    if (signature) sent.headers['guard-signature'] = signature;
    // Attempts recorded before the Standard Webhooks headers were sent show none of them.
    if (standard_signature) sent.headers['webhook-signature'] = standard_signature;
    else for (const h of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) delete sent.headers[h];
  }
  const headers = user.role === 'admin' ? sent.headers : { ...sent.headers, ...maskHeaders(custom) };
  return {
    delivery_id: d.id,
    endpoint_id: d.endpoint_id,
    ...attempt,
    payload_erased: erased,
    response_headers: readResponseHeaders(response_headers),
    request: {
      method: 'POST' as const,
      url: user.role === 'admin' ? endpoint.url : maskUrl(endpoint.url),
      headers,
      body: sent.body,
    },
  };
}
