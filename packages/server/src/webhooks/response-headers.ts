// What an attempt keeps of the receiver's response headers, for the console's attempt view
// (Svix and Stripe show them): each header in the order received, duplicates joined by ", ",
// as JSON of at most RESPONSE_HEADERS_MAX_BYTES. A receiver may answer with a credential (a
// session cookie, a token): the value of every header whose name looks like one is replaced,
// so no secret is stored. Pure.

/** The stored JSON's size at most; headers past it are counted in `omitted`, not kept. */
export const RESPONSE_HEADERS_MAX_BYTES = 4096;
/** A longer value is cut here, marked with "…". */
export const RESPONSE_HEADER_VALUE_MAX_CHARS = 512;
export const MASKED_VALUE = '[masked]';

/** Names that carry credentials (any name containing one of these words); their values are never stored. */
const CREDENTIAL_NAME = /cookie|auth|token|secret|key|passw|session|signature|credential/i;
/** Challenges that say which credential is wanted, not one: kept, they tell why a receiver answered 401. */
const CHALLENGES = new Set(['www-authenticate', 'proxy-authenticate']);

export interface KeptResponseHeaders {
  headers: Record<string, string>;
  /** Headers left out because the cap was reached. */
  omitted: number;
}

/** The response headers to store with an attempt, as JSON (KeptResponseHeaders). */
export function keptResponseHeaders(headers: Record<string, string | string[] | undefined>): string {
  const kept = new Map<string, string>();
  let omitted = 0;
  // {"headers":{},"omitted":NNNN}: the frame, with room for the count.
  let size = 32;
  for (const [rawName, rawValue] of Object.entries(headers)) {
    if (rawValue === undefined) continue;
    const name = rawName.toLowerCase();
    const joined = Array.isArray(rawValue) ? rawValue.join(', ') : rawValue;
    const value = isCredentialHeader(name)
      ? MASKED_VALUE
      : joined.length > RESPONSE_HEADER_VALUE_MAX_CHARS
        ? `${joined.slice(0, RESPONSE_HEADER_VALUE_MAX_CHARS)}…`
        : joined;
    const entry = jsonBytes(name) + jsonBytes(value) + 2;
    if (size + entry > RESPONSE_HEADERS_MAX_BYTES || kept.has(name)) {
      omitted++;
      continue;
    }
    kept.set(name, value);
    size += entry;
  }
  return JSON.stringify({ headers: Object.fromEntries(kept), omitted } satisfies KeptResponseHeaders);
}

/** The bytes of a string as JSON: its length + 2 when it is plain printable ASCII (the usual header), else counted. */
function jsonBytes(text: string): number {
  return PLAIN_ASCII.test(text) ? text.length + 2 : Buffer.byteLength(JSON.stringify(text));
}
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

export function isCredentialHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return !CHALLENGES.has(lower) && CREDENTIAL_NAME.test(lower);
}

/** The stored JSON read back; null when none was stored (or it cannot be read). */
export function readResponseHeaders(stored: string | null | undefined): KeptResponseHeaders | null {
  if (!stored) return null;
  try {
    const parsed = JSON.parse(stored) as KeptResponseHeaders;
    return typeof parsed?.headers === 'object' && parsed.headers !== null
      ? { headers: parsed.headers, omitted: Number(parsed.omitted) || 0 }
      : null;
  } catch {
    return null;
  }
}
