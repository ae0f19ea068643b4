// Bundle retention's server setting (docs/guard-server.md, "Configuration"): the most days a
// tenant may keep its support bundles. A tenant that chose nothing keeps them
// DEFAULT_BUNDLE_RETENTION_DAYS, or the maximum when the operator set it lower.

import type { SettingRow, SettingsReader } from '../kernel/settings.ts';

/** Days a tenant that chose nothing keeps its bundles (issue 24, item 6). */
export const DEFAULT_BUNDLE_RETENTION_DAYS = 90;

export interface BundleRetentionPolicy {
  defaultDays: number;
  maxDays: number;
}

export const BUNDLE_SETTINGS = [
  {
    key: 'bundleRetentionMaxDays',
    flag: 'bundle-retention-max-days',
    env: 'GUARD_SERVER_BUNDLE_RETENTION_MAX_DAYS',
    file: 'bundle_retention_max_days',
    default: '365',
  },
] as const satisfies readonly SettingRow[];

export function bundleRetentionPolicy(r: SettingsReader): BundleRetentionPolicy {
  const maxDays = r.integer('bundleRetentionMaxDays', 1, 36_500);
  return { defaultDays: Math.min(DEFAULT_BUNDLE_RETENTION_DAYS, maxDays), maxDays };
}

/** Days a tenant keeps its bundles: its own choice (null: the default), at most the maximum. */
export function effectiveBundleRetentionDays(chosen: number | null | undefined, policy: BundleRetentionPolicy): number {
  return Math.min(chosen ?? policy.defaultDays, policy.maxDays);
}
