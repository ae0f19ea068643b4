import type { AgentPrincipal } from '../auth/index.ts';
import type { SignalTable } from '../db/index.ts';
import { timeOrderedId } from '../kernel/ids.ts';
import type { CreateSignal } from './schemas.ts';

/**
 * The signal row an agent's POST /v1/signals creates: server id, name and environment come from
 * its enrolment; the idempotency key from its `Idempotency-Key` header.
 */
export function signalFromAgent(
  agent: Pick<AgentPrincipal, 'agentId' | 'tenantId' | 'hostname' | 'environment'>,
  body: CreateSignal,
  now: string,
  idempotencyKey: string | null = null,
): SignalTable {
  return {
    id: timeOrderedId('sig'),
    tenant_id: agent.tenantId,
    agent_id: agent.agentId,
    server_id: agent.agentId,
    server_name: agent.hostname,
    signal_type: body.signal_type,
    severity: body.severity,
    description: body.description,
    identity_id: body.identity_id,
    identity_name: body.identity_name,
    environment: body.environment ?? agent.environment,
    created_at: body.created_at ? new Date(body.created_at).toISOString() : now,
    received_at: now,
    is_test: 0,
    event_type: 'signal_created',
    event_data: null,
    idempotency_key: idempotencyKey,
  };
}
