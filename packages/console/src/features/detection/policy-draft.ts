// The detection policy being edited: what the admin changed on the page, compared with the
// policy as the server has it. Pure, so the page only renders.

import { severityLabel } from '../../lib/severity.ts';

export interface PolicyEntry {
  signal_type: string;
  enabled: boolean;
  /** The override; null: the default severity. */
  severity: number | null;
  default_severity: number;
  description: string;
}

/** The admin's edits by signal type (only what they touched). */
export type Draft = Record<string, { enabled?: boolean; severity?: number | null }>;

/** The body of PUT /v1/detection/policy: the fields that differ from the server's policy. */
export type PolicyChange = Record<string, { enabled?: boolean; severity?: number | null }>;

/** An entry as the page shows it: the server's value unless the admin changed it. */
export function shown(entry: PolicyEntry, draft: Draft): { enabled: boolean; severity: number | null } {
  const d = draft[entry.signal_type] ?? {};
  return { enabled: d.enabled ?? entry.enabled, severity: d.severity !== undefined ? d.severity : entry.severity };
}

/** A severity as the page words it: "default (3)" or "5 critical". */
export function severityText(severity: number | null, defaultSeverity: number): string {
  return severity === null ? `default (${defaultSeverity})` : `${severity} ${severityLabel(severity)}`;
}

/** What differs from the server's policy: the PUT body and one line per change for the confirmation. */
export function changesOf(entries: readonly PolicyEntry[], draft: Draft): { body: PolicyChange; lines: string[] } {
  const body: PolicyChange = {};
  const lines: string[] = [];
  for (const e of entries) {
    const now = shown(e, draft);
    const change: { enabled?: boolean; severity?: number | null } = {};
    if (now.enabled !== e.enabled) {
      change.enabled = now.enabled;
      lines.push(`${e.signal_type}: ${now.enabled ? 'turn on' : 'turn off'}`);
    }
    if (now.severity !== e.severity) {
      change.severity = now.severity;
      lines.push(
        `${e.signal_type}: severity ${severityText(e.severity, e.default_severity)} → ${severityText(now.severity, e.default_severity)}`,
      );
    }
    if (Object.keys(change).length > 0) body[e.signal_type] = change;
  }
  return { body, lines };
}
