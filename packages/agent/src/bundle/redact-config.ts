// config.redacted.json (DESIGN §3): the effective config with identity and credential keys
// removed, not masked, at any depth. All other keys are kept as they are.

import { keyMatches } from './redact.ts';

/** Tenant, agent and host identity, plus the two named credentials. */
export const REMOVED_CONFIG_KEYS: ReadonlySet<string> = new Set([
  'tenant_id',
  'agent_id',
  'host_id',
  'hostname',
  'host_name',
  'machine_id',
  'server_id',
  'server_name',
  'api_key',
  'enroll_token',
]);

function isRemoved(key: string): boolean {
  return REMOVED_CONFIG_KEYS.has(key) || keyMatches(key);
}

export function redactConfig(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactConfig);
  if (typeof value !== 'object' || value === null) return value;
  const kept: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (!isRemoved(key)) kept[key] = redactConfig(child);
  }
  return kept;
}
