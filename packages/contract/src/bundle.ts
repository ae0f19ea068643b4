// Contract of the support bundle (spec 2.1, 2.2, 8; DESIGN §3). Agents in the field and
// acceptance suites outside this repo depend on every name and value here. The manifest's
// schema and its parser are in manifest.ts.

/** Pre-compress cap: the sum of the sizes of all stored members except the manifest. */
export const BUNDLE_CAP_BYTES = 180 * 1024 * 1024;

export const BUNDLE_VERSION = 1;

export const MANIFEST_MEMBER = 'BUNDLE-MANIFEST.json';
export const AGENT_LOG_MEMBER = 'agent.log';
export const SYSTEM_MEMBER = 'system.json';
export const CONFIG_MEMBER = 'config.redacted.json';

/** Attribute keys whose values are masked in log members and removed from the config. */
export const REDACTION_PATTERN_SOURCE = '^(api_key|enroll_token|.*_token|.*_secret)$';
export const REDACTION_PATTERN = new RegExp(REDACTION_PATTERN_SOURCE);
export const REDACTED_VALUE = '[REDACTED]';

export const BUNDLE_TRIGGERS = ['cli', 'console_push'] as const;
export type BundleTrigger = (typeof BUNDLE_TRIGGERS)[number];

/**
 * What `collect --obfuscate` replaces with tokens `<kind>-<n>` (DESIGN §4, bundles, second
 * round): the manifest's `obfuscation.kinds`. Here, beside the other constants, so the agent
 * reads it without loading the manifest's schema.
 */
export const OBFUSCATION_KINDS = ['host', 'ip', 'user', 'email'] as const;
export type ObfuscationKind = (typeof OBFUSCATION_KINDS)[number];

/** Rotated segments of a log file: `<basename(log_path)>.<N>.gz`, N >= 1, 1 newest. */
export function rotatedSegmentNumber(logBase: string, fileName: string): number | undefined {
  if (!fileName.startsWith(`${logBase}.`) || !fileName.endsWith('.gz')) return undefined;
  const digits = fileName.slice(logBase.length + 1, -'.gz'.length);
  if (!/^[1-9][0-9]{0,8}$/.test(digits)) return undefined;
  return Number(digits);
}
