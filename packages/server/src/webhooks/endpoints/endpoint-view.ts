// Reading one endpoint for a user: found in the user's tenant (or 404), and shown as the API
// answers it (headers opened and masked by role, health, newest delivery, the rotation in its
// grace period). Below crud, rotation and the test event, which all answer with it.

import type { TenantUser } from '../../auth/index.ts';
import type { WebhookEndpointTable } from '../../db/index.ts';
import { notFound } from '../../kernel/errors.ts';
import type { WebhookContext } from '../context.ts';
import { deliveryStatus } from '../delivery-status.ts';
import { openAuth } from '../endpoint-auth.ts';
import { openHeaders } from '../endpoint-headers.ts';
import { endpointHealth } from '../endpoint-health.ts';
import { activeRotation } from '../secret-rotation.ts';
import { type EndpointView, endpointView, type RotationView } from './schemas.ts';

/** The endpoint, or 404: one of another tenant is "not found" too. */
export async function findEndpoint(ctx: WebhookContext, tenantId: string, id: string): Promise<WebhookEndpointTable> {
  const row = await ctx.endpoints.find(tenantId, id);
  if (!row) throw notFound('webhook endpoint');
  return row;
}

export async function view(ctx: WebhookContext, e: WebhookEndpointTable, user: TenantUser): Promise<EndpointView> {
  const newest = await ctx.deliveries.newestForEndpoint(user.tenantId, e.id);
  const health = await endpointHealth(ctx.db, e, ctx.now(), ctx.disableAfterMs);
  return endpointView(
    e,
    openHeaders(ctx.secretKey, e.id, e.headers),
    user.role,
    newest,
    health,
    await rotationView(ctx, e),
    openAuth(ctx.secretKey, e.id, e.auth_sealed),
  );
}

/** What a user sees of the rotation in its grace period, with its proof's delivery status. */
export async function rotationView(ctx: WebhookContext, e: WebhookEndpointTable): Promise<RotationView> {
  const rotation = activeRotation(e, ctx.now());
  if (!rotation) return null;
  const proofDelivery = rotation.proofSignalId
    ? await ctx.deliveries.forSignal(e.tenant_id, rotation.proofSignalId, e.id)
    : undefined;
  return {
    started_at: rotation.startedAt,
    grace_ends_at: rotation.graceEndsAt,
    proof: rotation.proofSignalId
      ? {
          signal_id: rotation.proofSignalId,
          delivery_id: proofDelivery?.id ?? null,
          status: proofDelivery ? deliveryStatus(proofDelivery) : null,
        }
      : null,
    can_complete: proofDelivery?.state === 'succeeded',
  };
}
