// POST /v1/webhooks/listen/trigger (`guard trigger signal_created`): a test signal_created
// event of the tenant for its listen streams. It is a row of `signals` like every event (so
// that a stream on any replica finds it), marked is_test (no signal list or count shows it)
// and written without deliveries: no endpoint receives it. An endpoint's own test event
// (POST /v1/webhooks/endpoints/{id}/test) is the way to send one to an endpoint.

import type { TenantUser } from '../../auth/index.ts';
import type { SignalTable } from '../../db/index.ts';
import { timeOrderedId } from '../../kernel/ids.ts';
import { TRIGGER_SERVER_ID } from './event-filter.ts';
import type { TriggerEvent } from './schemas.ts';

export function triggeredSignal(user: TenantUser, body: TriggerEvent, now: Date): SignalTable {
  const at = now.toISOString();
  return {
    id: timeOrderedId('sig'),
    tenant_id: user.tenantId,
    agent_id: null,
    server_id: TRIGGER_SERVER_ID,
    server_name: 'guard-trigger',
    signal_type: body.signal_type ?? 'test_event',
    severity: body.severity ?? 1,
    description: body.description ?? `Test event triggered by ${user.email} (guard trigger)`,
    identity_id: user.userId,
    identity_name: user.email,
    environment: 'test',
    created_at: at,
    received_at: at,
    is_test: 1,
    event_type: 'signal_created',
    event_data: null,
  };
}
