// config.redacted.json (DESIGN §3, contract — config file): the effective config with
// identity and credential keys removed, not masked, at any depth; in every string value left,
// the password of a URL's userinfo is masked. All other keys are kept as they are.
//
// Only DESIGN §3 decides here: the operator's `redaction.extra_keys` apply to log members.

import { REDACTED_VALUE } from '@guard/contract/bundle';
import { keyMatches } from './redact.ts';

/** Tenant, agent and host identity, plus the two named credentials (compared normalised). */
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

/** A key is credential-like when its normalised name is or ends with one of these. */
export const CREDENTIAL_SUFFIXES: readonly string[] = [
  'password',
  'passwd',
  'secret',
  'token',
  'api_key',
  'apikey',
  'authorization',
  'private_key',
  'credential',
  'credentials',
  'cookie',
  'dsn',
];

/**
 * The name as DESIGN §3 compares it: camelCase boundaries (`apiKey`, `APIKey`, `oauth2Token`),
 * `-` and `.` read as `_`, then lowercased.
 */
export function normalizeKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[-.]/g, '_')
    .toLowerCase();
}

function isRemoved(key: string): boolean {
  const name = normalizeKey(key);
  if (REMOVED_CONFIG_KEYS.has(name)) return true;
  if (CREDENTIAL_SUFFIXES.some((suffix) => name.endsWith(suffix))) return true;
  return keyMatches(key); // the redaction pattern, on the whole key or its last dotted segment
}

// `scheme://user:PASS@`: the password runs to the last `@` before the path, query, fragment
// or whitespace, so an unencoded `@` inside it is masked too (`u:p@ss@host`).
const USERINFO_PASSWORD = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s:@/?#]*:)([^\s/?#]+)@/g;

/** `value` with the password of every URL userinfo in it replaced by `[REDACTED]`. */
export function maskUrlPasswords(value: string): string {
  return value.replace(USERINFO_PASSWORD, `$1${REDACTED_VALUE}@`);
}

export function redactConfig(value: unknown): unknown {
  if (typeof value === 'string') return maskUrlPasswords(value);
  if (Array.isArray(value)) return value.map(redactConfig);
  if (typeof value !== 'object' || value === null) return value;
  // fromEntries defines own properties: a `__proto__` key stays a key, never a prototype.
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !isRemoved(key))
      .map(([key, child]) => [key, redactConfig(child)]),
  );
}
