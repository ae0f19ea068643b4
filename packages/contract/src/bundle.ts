// Contract of the support bundle (spec 2.1, 2.2, 8; DESIGN §3). Agents in the field and
// acceptance suites outside this repo depend on every name and value here.

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

/** Rotated segments of a log file: `<basename(log_path)>.<N>.gz`, N >= 1, 1 newest. */
export function rotatedSegmentNumber(logBase: string, fileName: string): number | undefined {
  if (!fileName.startsWith(`${logBase}.`) || !fileName.endsWith('.gz')) return undefined;
  const digits = fileName.slice(logBase.length + 1, -'.gz'.length);
  if (!/^[1-9][0-9]{0,8}$/.test(digits)) return undefined;
  return Number(digits);
}

export interface ManifestMember {
  name: string;
  size: number;
  sha256: string;
}

export interface CollectionError {
  source: string;
  message: string;
}

export interface BundleManifest {
  bundle_version: number;
  agent_version: string;
  generated_at: string;
  trigger: BundleTrigger;
  contents: ManifestMember[];
  trimmed_segments: string[];
  redaction: {
    pattern: string;
    values_masked: number;
    members: Record<string, number>;
    /**
     * The operator's `redaction.extra_keys` (key names and ^...$ patterns masked on top of
     * `pattern`), present only when the agent was configured with some: a manifest without
     * it is exactly the contract's.
     */
    extra_keys?: string[];
  };
  collection_errors: CollectionError[];
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
const MEMBER_NAME = /^[A-Za-z0-9._-]{1,255}$/;

/**
 * Validates an untrusted manifest (for example one read back from an archive by `upload`)
 * and returns it typed, or throws an Error that names the first offending field. The result
 * is a fresh object holding the contract's fields only: unknown ones are dropped, so nothing
 * of unbounded shape travels on from here.
 */
export function parseManifest(value: unknown): BundleManifest {
  const fail = (field: string, want: string): never => {
    throw new Error(`invalid ${MANIFEST_MEMBER}: ${field} must be ${want}`);
  };
  if (!isRecord(value)) return fail('the document', 'a JSON object');
  if (value.bundle_version !== BUNDLE_VERSION) fail('bundle_version', `${BUNDLE_VERSION}`);
  if (typeof value.agent_version !== 'string' || value.agent_version === '')
    fail('agent_version', 'a non-empty string');
  if (typeof value.generated_at !== 'string' || Number.isNaN(Date.parse(value.generated_at)))
    fail('generated_at', 'an ISO 8601 timestamp');
  if (!BUNDLE_TRIGGERS.includes(value.trigger as BundleTrigger))
    fail('trigger', `one of ${BUNDLE_TRIGGERS.join(', ')}`);
  if (!Array.isArray(value.contents)) fail('contents', 'an array');
  const seen = new Set<string>();
  for (const [i, m] of (value.contents as unknown[]).entries()) {
    if (!isRecord(m)) fail(`contents[${i}]`, 'an object');
    const member = m as Record<string, unknown>;
    if (typeof member.name !== 'string' || !MEMBER_NAME.test(member.name) || member.name === MANIFEST_MEMBER)
      fail(`contents[${i}].name`, 'a plain file name other than the manifest');
    if (seen.has(member.name as string)) fail(`contents[${i}].name`, 'unique');
    seen.add(member.name as string);
    if (!Number.isSafeInteger(member.size) || (member.size as number) < 0)
      fail(`contents[${i}].size`, 'a non-negative integer');
    if (typeof member.sha256 !== 'string' || !SHA256_HEX.test(member.sha256))
      fail(`contents[${i}].sha256`, '64 lowercase hex digits');
  }
  if (!Array.isArray(value.trimmed_segments) || !value.trimmed_segments.every((s) => typeof s === 'string'))
    fail('trimmed_segments', 'an array of strings');
  const r = value.redaction;
  if (!isRecord(r)) return fail('redaction', 'an object');
  if (typeof r.pattern !== 'string') fail('redaction.pattern', 'a string');
  if (!Number.isSafeInteger(r.values_masked) || (r.values_masked as number) < 0)
    fail('redaction.values_masked', 'a non-negative integer');
  if (!isRecord(r.members) || !Object.values(r.members).every((n) => Number.isSafeInteger(n) && (n as number) >= 0))
    fail('redaction.members', 'an object of non-negative integers');
  if (r.extra_keys !== undefined && (!Array.isArray(r.extra_keys) || !r.extra_keys.every((k) => typeof k === 'string')))
    fail('redaction.extra_keys', 'an array of strings');
  const errors = value.collection_errors ?? [];
  if (
    !Array.isArray(errors) ||
    !errors.every((e) => isRecord(e) && typeof e.source === 'string' && typeof e.message === 'string')
  )
    fail('collection_errors', 'an array of {source, message}');
  const v = value as unknown as BundleManifest;
  return {
    bundle_version: v.bundle_version,
    agent_version: v.agent_version,
    generated_at: v.generated_at,
    trigger: v.trigger,
    contents: v.contents.map(({ name, size, sha256 }) => ({ name, size, sha256 })),
    trimmed_segments: [...v.trimmed_segments],
    redaction: {
      pattern: v.redaction.pattern,
      values_masked: v.redaction.values_masked,
      members: { ...v.redaction.members },
      ...(v.redaction.extra_keys === undefined ? {} : { extra_keys: [...v.redaction.extra_keys] }),
    },
    collection_errors: (errors as CollectionError[]).map(({ source, message }) => ({ source, message })),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
