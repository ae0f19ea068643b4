// Waits on the webhook delivery queue, read from its tables, for tests that must know that
// nothing more will arrive at a receiver, in place of a sleep: an endpoint's deliveries all
// made (none pending or in flight; the worker marks a delivery done only once its receiver
// answered, so the receiver has had every request it will get), and the replay feeder's
// passes (a later replay done shows that the feeder ran after a moment).

import assert from 'node:assert/strict';
import { waitFor } from './harness.ts';
import { apiCall, createEndpoint, seedDeliveries, type WebhookServer } from './webhook-harness.ts';

type ServerWithDb = { deps: Pick<WebhookServer['deps'], 'db'> };

/** Deliveries of these endpoints the server has still to make: pending (due or waiting for a retry) or in flight. */
export async function deliveriesToMake(server: ServerWithDb, endpointIds: string[]): Promise<number> {
  const row = await server.deps.db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('endpoint_id', 'in', endpointIds)
    .where('state', 'in', ['pending', 'delivering'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Resolves once the server has no delivery of these endpoints left to make. */
export async function waitForDeliveriesMade(
  server: ServerWithDb,
  endpointIds: string[],
  timeoutMs = 30_000,
): Promise<void> {
  await waitFor(
    async () => (await deliveriesToMake(server, endpointIds)) === 0,
    `every delivery to ${endpointIds.length} endpoint(s) made`,
    timeoutMs,
  );
}

/**
 * Resolves once the replay feeder has run a pass that began after this call, and a later one:
 * a replay of one delivery to an endpoint of its own (at `url`, which must answer 2xx) is done
 * only then — the first pass re-queues the delivery, a later one finds its walk at the end —
 * and shown done once that delivery was made. Every pass feeds each running replay with room
 * in its window: a replay that should have stopped and was fed in that first pass has queued
 * its deliveries by the time this resolves.
 */
export async function replayFeederPassed(
  server: WebhookServer,
  tenant: { tenantId: string; adminToken: string },
  url: string,
  timeoutMs = 30_000,
): Promise<void> {
  const marker = await createEndpoint(server, tenant.adminToken, { name: 'feeder marker', url });
  await seedDeliveries(server, tenant.tenantId, marker.id, 1);
  // Before the seeded delivery by either clock (the server's may have been moved on).
  const since = new Date(Math.min(Date.now(), server.clock.now().getTime()) - 60_000).toISOString();
  const started = await apiCall(server, 'POST', `/v1/webhooks/endpoints/${marker.id}/replay`, tenant.adminToken, {
    since,
  });
  assert.equal(started.status, 202, started.text);
  assert.equal(started.json.total, 1, 'the marker replay has its one delivery');
  await waitFor(
    async () =>
      (await apiCall(server, 'GET', `/v1/webhooks/replays/${started.json.id}`, tenant.adminToken)).json.state ===
      'done',
    'the marker replay to be done',
    timeoutMs,
  );
}
