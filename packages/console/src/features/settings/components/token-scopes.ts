// How the token page offers and shows scopes (server: auth/scopes.ts). Pure, so the page only renders.

import type { TokenScope } from '../api/account.ts';

export type Access = 'full' | 'read' | 'custom';
export type AreaAccess = 'none' | 'read' | 'write';

/** The areas a custom token chooses per row; the audit log can only be read. */
export const SCOPE_AREAS = [
  { area: 'webhooks', label: 'Webhooks', writable: true },
  { area: 'signals', label: 'Signals', writable: true },
  { area: 'servers', label: 'Servers', writable: true },
  { area: 'bundles', label: 'Support bundles', writable: true },
  { area: 'users', label: 'Users', writable: true },
  { area: 'audit', label: 'Audit log', writable: false },
  { area: 'settings', label: 'Tenant settings', writable: true },
] as const;
export type ScopeArea = (typeof SCOPE_AREAS)[number]['area'];

/** The scopes a token is created with: undefined for full access. */
export function scopesOf(access: Access, areas: Partial<Record<ScopeArea, AreaAccess>>): TokenScope[] | undefined {
  if (access === 'full') return undefined;
  if (access === 'read') return ['read'];
  const out: TokenScope[] = [];
  for (const { area } of SCOPE_AREAS) {
    const chosen = areas[area] ?? 'none';
    if (chosen !== 'none') out.push(`${area}:${chosen}` as TokenScope);
  }
  return out;
}

/** A token's scopes as the table shows them. */
export function describeScopes(scopes: readonly string[] | null): string {
  if (scopes === null) return 'Full access';
  if (scopes.length === 1 && scopes[0] === 'read') return 'Read-only';
  return scopes
    .map((s) => {
      if (s === 'read') return 'read everything';
      const [area, access] = s.split(':');
      const label = SCOPE_AREAS.find((a) => a.area === area)?.label ?? area;
      return `${label}: ${access === 'write' ? 'read and write' : 'read'}`;
    })
    .join('; ');
}

/** The expiries offered, in days; null: never. The page defaults to 90. */
export const EXPIRIES = [
  { days: 30, label: '30 days' },
  { days: 90, label: '90 days' },
  { days: 365, label: '365 days' },
  { days: null, label: 'Never' },
] as const;
