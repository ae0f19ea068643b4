// Validation of endpoint URLs and custom headers (DESIGN §5). Pure; the routes call it on
// create and on every edit.

import { isIP } from 'node:net';
import { ALLOW_PRIVATE_HINT, blockedReason } from './ssrf.ts';

export const URL_MAX_LENGTH = 2048;
export const NAME_MAX_LENGTH = 100;
export const HEADERS_MAX_COUNT = 20;
export const HEADER_NAME_MAX_LENGTH = 100;
export const HEADER_VALUE_MAX_LENGTH = 4096;
export const HEADERS_MAX_TOTAL_BYTES = 16 * 1024;

/** Headers the delivery sets itself or that belong to the transport. */
const RESERVED = new Set([
  'content-type',
  'user-agent',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'expect',
]);
/** RFC 7230 token characters. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function validateEndpointUrl(raw: string): string | undefined {
  if (raw.length > URL_MAX_LENGTH) return `url must be at most ${URL_MAX_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute URL';
  }
  if (url.protocol === 'http:')
    return 'url must use https:// (plain http:// is refused: deliveries carry signed security data)';
  if (url.protocol !== 'https:') return 'url must use https://';
  if (url.username || url.password)
    return 'url must not contain credentials: use a custom Authorization header instead';
  if (url.hash) return 'url must not contain a #fragment';
  if (!url.hostname) return 'url must name a host';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (
    !isIP(host) &&
    !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i.test(host)
  )
    return 'url host is not a valid hostname';
  return undefined;
}

/**
 * An IP-literal host must be a public address unless private targets are allowed (DESIGN §5
 * SSRF guard): refused when written, not only on every attempt. A name is checked on every
 * connection instead, on the address it resolves to then. Call after validateEndpointUrl.
 */
export function validateEndpointAddress(raw: string, allowPrivate: boolean): string | undefined {
  if (allowPrivate) return undefined;
  // The URL parser has already normalised 2130706433 and 0x7f.1 to 127.0.0.1.
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  if (!isIP(host)) return undefined;
  const why = blockedReason(host);
  return why && `url host ${host} is ${/^[aeiou]/i.test(why) ? 'an' : 'a'} ${why}; ${ALLOW_PRIVATE_HINT}`;
}

export function validateHeaders(headers: Record<string, unknown>): string | undefined {
  const entries = Object.entries(headers);
  if (entries.length > HEADERS_MAX_COUNT) return `at most ${HEADERS_MAX_COUNT} custom headers`;
  let total = 0;
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (name.length === 0 || name.length > HEADER_NAME_MAX_LENGTH || !TOKEN.test(name))
      return `header name ${JSON.stringify(name.slice(0, 120))} is not a valid HTTP header name`;
    if (RESERVED.has(lower) || lower.startsWith('guard-'))
      return `header ${name} is set by Guard and cannot be overridden`;
    if (seen.has(lower)) return `header ${name} is given twice`;
    seen.add(lower);
    if (typeof value !== 'string') return `header ${name} must have a string value`;
    if (value.length > HEADER_VALUE_MAX_LENGTH)
      return `header ${name} value is longer than ${HEADER_VALUE_MAX_LENGTH} characters`;
    // Visible ASCII, space and tab only: no CR/LF (header injection), no NUL, no other controls.
    if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value) || /[\r\n\0]/.test(value))
      return `header ${name} value contains control characters`;
    total += name.length + value.length;
  }
  if (total > HEADERS_MAX_TOTAL_BYTES) return `custom headers are larger than ${HEADERS_MAX_TOTAL_BYTES} bytes in all`;
  return undefined;
}
