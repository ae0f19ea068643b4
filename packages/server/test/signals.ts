// A signal row as the outbox stores it, for the queue, outbox and retention tests: one
// tenant's sudo command on web-1, received at `receivedAt`.

import type { SignalTable } from '../src/db/index.ts';
import { timeOrderedId } from '../src/kernel/ids.ts';

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
