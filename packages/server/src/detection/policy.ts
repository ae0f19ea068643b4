// A tenant's detection policy as pure data (DESIGN §3 contract — detection): for each of the
// seven detection signal types, whether it is on and a severity override (null: the type's
// default). What the tenant stores is only what differs from the defaults; everything here is
// computed from it: the people's view, the agent's view (severity resolved), the effect of a
// change and its audit text, and what ingest does with an agent's signal.

import {
  type AgentDetectionPolicy,
  DETECTION_SIGNAL_TYPES,
  type DetectionPolicyView,
  type DetectionSignalType,
  isDetectionSignalType,
} from '@guard/contract/detection';

export interface TypeSetting {
  enabled: boolean;
  /** The tenant's override; null: the type's default severity. */
  severity: number | null;
}

export interface DetectionPolicy {
  /** Bumped by every change; 0: never changed. */
  revision: number;
  updatedAt: string | null;
  /** Every detection type's setting. */
  types: Record<DetectionSignalType, TypeSetting>;
}

export type PolicyChange = Partial<Record<string, { enabled?: boolean; severity?: number | null }>>;

const DEFAULT_SETTING: TypeSetting = { enabled: true, severity: null };

/** The policy a tenant stored (JSON of the settings that differ from the defaults; unknown names ignored). */
export function policyOf(
  row: { signal_types: string; revision: number; updated_at: string } | undefined,
): DetectionPolicy {
  const stored = row ? (JSON.parse(row.signal_types) as Record<string, Partial<TypeSetting>>) : {};
  const types = {} as Record<DetectionSignalType, TypeSetting>;
  for (const { signal_type } of DETECTION_SIGNAL_TYPES) {
    const s = stored[signal_type];
    types[signal_type] = {
      enabled: typeof s?.enabled === 'boolean' ? s.enabled : true,
      severity: typeof s?.severity === 'number' ? s.severity : null,
    };
  }
  // A row that was only made to be locked (revision 0) is the defaults, never changed.
  return { revision: row?.revision ?? 0, updatedAt: row && row.revision > 0 ? row.updated_at : null, types };
}

/** What is stored: the settings that differ from the defaults. */
export function storedSettings(policy: DetectionPolicy): string {
  const out: Record<string, TypeSetting> = {};
  for (const [type, s] of Object.entries(policy.types))
    if (s.enabled !== DEFAULT_SETTING.enabled || s.severity !== DEFAULT_SETTING.severity) out[type] = s;
  return JSON.stringify(out);
}

/** The version agents and the console compare: changes whenever the policy does. */
export const versionOf = (policy: DetectionPolicy): string => String(policy.revision);

/** The names in a change that are not detection signal types (a PUT naming one is refused). */
export function unknownTypes(change: PolicyChange): string[] {
  return Object.keys(change).filter((name) => !isDetectionSignalType(name));
}

/**
 * The policy after a change, and what changed in words ("ssh_login_succeeded.enabled=false",
 * "sudo_command_executed.severity=5", "….severity=default"), in the table's order; no words:
 * nothing changed.
 */
export function applyChange(
  policy: DetectionPolicy,
  change: PolicyChange,
): { next: DetectionPolicy; changed: string[] } {
  const types = { ...policy.types };
  const changed: string[] = [];
  for (const { signal_type } of DETECTION_SIGNAL_TYPES) {
    const c = change[signal_type];
    if (!c) continue;
    const now = { ...types[signal_type] };
    if (c.enabled !== undefined && c.enabled !== now.enabled) {
      now.enabled = c.enabled;
      changed.push(`${signal_type}.enabled=${c.enabled}`);
    }
    if (c.severity !== undefined && c.severity !== now.severity) {
      now.severity = c.severity;
      changed.push(`${signal_type}.severity=${c.severity ?? 'default'}`);
    }
    types[signal_type] = now;
  }
  return { next: { ...policy, types }, changed };
}

export function policyView(policy: DetectionPolicy): DetectionPolicyView {
  return {
    signal_types: DETECTION_SIGNAL_TYPES.map((t) => ({
      signal_type: t.signal_type,
      enabled: policy.types[t.signal_type].enabled,
      severity: policy.types[t.signal_type].severity,
      default_severity: t.default_severity,
      description: t.description,
    })),
    version: versionOf(policy),
    updated_at: policy.updatedAt,
  };
}

/** What the agent is handed: every type, severity resolved (the override, else the default). */
export function agentPolicyView(policy: DetectionPolicy): AgentDetectionPolicy {
  const signal_types: AgentDetectionPolicy['signal_types'] = {};
  for (const t of DETECTION_SIGNAL_TYPES) {
    const s = policy.types[t.signal_type];
    signal_types[t.signal_type] = {
      enabled: s.enabled,
      severity: s.severity ?? t.default_severity,
      overridden: s.severity !== null,
    };
  }
  return { version: versionOf(policy), signal_types };
}

export type IngestDecision = { suppressed: true } | { suppressed: false; severity: number };

/**
 * The safety net at ingest: a detection type the tenant turned off is not stored; an overridden
 * severity replaces the agent's. Other signal types pass unchanged.
 */
export function ingestDecision(policy: DetectionPolicy, signalType: string, severity: number): IngestDecision {
  if (!isDetectionSignalType(signalType)) return { suppressed: false, severity };
  const s = policy.types[signalType];
  if (!s.enabled) return { suppressed: true };
  return { suppressed: false, severity: s.severity ?? severity };
}
