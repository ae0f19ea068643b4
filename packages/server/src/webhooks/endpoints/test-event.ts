// POST /v1/webhooks/endpoints/{id}/test: a synthetic signal_created event delivered to this
// endpoint only, through the same outbox and worker as real signals (is_test: it is left out
// of the signal list).

import type { TenantUser } from '../../auth/index.ts';
import type { WebhookEndpointTable } from '../../db/index.ts';
import { badRequest } from '../../kernel/errors.ts';
import { timeOrderedId } from '../../kernel/ids.ts';
import type { WebhookContext } from '../context.ts';
import { EVENT_BITS } from '../subscriptions.ts';
import { findEndpoint } from './endpoint-view.ts';

export const endpointDisabled = () => badRequest('the endpoint is disabled: enable it first', 'endpoint_disabled');

export async function sendTestEvent(ctx: WebhookContext, user: TenantUser, id: string) {
  const endpoint = await findEndpoint(ctx, user.tenantId, id);
  if (endpoint.enabled !== 1) throw endpointDisabled();
  if ((endpoint.event_mask & EVENT_BITS.test) === 0)
    throw badRequest('the endpoint does not subscribe to test events: add "test" to its event_types', 'not_subscribed');
  return writeTestEvent(
    ctx,
    endpoint,
    timeOrderedId('sig'),
    `Test event for endpoint "${endpoint.name}", sent by ${user.email}`,
    user,
  );
}

/** Writes the test event's signal `signalId` with its one delivery, to `endpoint`, and wakes the worker. */
export async function writeTestEvent(
  ctx: WebhookContext,
  endpoint: WebhookEndpointTable,
  signalId: string,
  description: string,
  user: TenantUser,
) {
  const now = ctx.now().toISOString();
  const [deliveryId] = await ctx.outbox.write(
    {
      id: signalId,
      tenant_id: endpoint.tenant_id,
      agent_id: null,
      server_id: 'test',
      server_name: 'guard-test-event',
      signal_type: 'test_event',
      severity: 1,
      description,
      identity_id: user.userId,
      identity_name: user.email,
      environment: 'test',
      created_at: now,
      received_at: now,
      is_test: 1,
      event_type: 'signal_created',
      event_data: null,
    },
    endpoint.id,
  );
  // No delivery: the endpoint was disabled between the check and the write.
  if (!deliveryId) throw endpointDisabled();
  ctx.wakeDeliveries();
  return { signal_id: signalId, delivery_id: deliveryId };
}
