// An endpoint's deliveries, one delivery with its attempts, and an admin's redelivery.

import type { TenantUser } from '../../auth/index.ts';
import type { WebhookDeliveryTable } from '../../db/index.ts';
import { badRequest, notFound } from '../../errors.ts';
import { nextBefore, parseBefore } from '../../pagination.ts';
import type { WebhookContext } from '../context.ts';
import { findEndpoint } from '../endpoints/crud.ts';
import { type DeliveryListQuery, type DeliveryView, deliveryView } from './schemas.ts';

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
    limit,
    before: parseBefore(q.before),
  });
  return { deliveries: rows.map(deliveryView), next_before: nextBefore(rows, limit, (d) => [d.created_at, d.id]) };
}

export async function showDelivery(ctx: WebhookContext, user: TenantUser, id: string) {
  const d = await findDelivery(ctx, user.tenantId, id);
  const attempts = await ctx.deliveries.attempts(user.tenantId, d.id);
  return { ...deliveryView(d), attempt_log: attempts };
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
