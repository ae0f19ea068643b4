// Rows as the outbox finds and stores them, for the queue, outbox, agent-key and retention tests
// (and bench/queue-cycle): a tenant's enrolled agent, a tenant's webhook endpoint, and one
// tenant's sudo command on web-1, received at `receivedAt`.

import type { AgentTable, SignalTable, WebhookEndpointTable } from '../src/db/index.ts';
import { timeOrderedId } from '../src/kernel/ids.ts';
import { NEW_ENDPOINT_DEFAULTS } from '../src/webhooks/subscriptions.ts';

/** An agent of `tenantId` enrolled at `enrolledAt`, its key hash `hash-<id>`, host `host-<id>`, never seen. */
export function testAgent(id: string, tenantId: string, enrolledAt: Date, extra: Partial<AgentTable> = {}): AgentTable {
  return {
    id,
    tenant_id: tenantId,
    api_key_hash: `hash-${id}`,
    hostname: `host-${id}`,
    environment: 'prod',
    agent_version: '0.1.0',
    enrolled_at: enrolledAt.toISOString(),
    revoked_at: null,
    last_seen_at: null,
    uptime_seconds: null,
    agent_uptime_seconds: null,
    last_heartbeat_at: null,
    ...extra,
  };
}

/** An endpoint row of `tenantId` at https://<id>.example/hook, its secret sealed as `sealed-<id>`. */
export function testEndpoint(id: string, tenantId: string, enabled: number, createdAt: Date): WebhookEndpointTable {
  return {
    id,
    tenant_id: tenantId,
    name: id,
    url: `https://${id}.example/hook`,
    headers: '{}',
    secret_sealed: `sealed-${id}`,
    enabled,
    disabled_reason: null,
    failing_since: null,
    ...NEW_ENDPOINT_DEFAULTS,
    created_at: createdAt.toISOString(),
    updated_at: createdAt.toISOString(),
  };
}

export function testSignal(
  tenantId: string,
  receivedAt: Date,
  id = timeOrderedId('sig', receivedAt.getTime()),
): SignalTable {
  return {
    id,
    tenant_id: tenantId,
    agent_id: null,
    server_id: 'srv',
    server_name: 'web-1',
    signal_type: 'sudo_command_executed',
    severity: 3,
    description: 'd',
    identity_id: 'u1',
    identity_name: 'alice',
    environment: 'prod',
    created_at: receivedAt.toISOString(),
    received_at: receivedAt.toISOString(),
    is_test: 0,
    event_type: 'signal_created',
    event_data: null,
  };
}
