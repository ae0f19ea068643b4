// Validation of endpoint URLs and custom headers (DESIGN §5). Pure; the routes call it on
// create and on every edit.

import { isIP } from 'node:net';
import {
  endpointUrlProblem,
  HEADER_VALUE_MAX_LENGTH,
  HEADERS_MAX_COUNT,
  HEADERS_MAX_TOTAL_BYTES,
  headerNameProblem,
  headerValueProblem,
  URL_MAX_LENGTH,
  type UrlProblem,
} from '@guard/contract/endpoint-rules';
import { ALLOW_PRIVATE_HINT, blockedReason } from './ssrf.ts';

export {
  HEADER_NAME_MAX_LENGTH,
  HEADER_VALUE_MAX_LENGTH,
  HEADERS_MAX_COUNT,
  HEADERS_MAX_TOTAL_BYTES,
  NAME_MAX_LENGTH,
  RATE_LIMIT_MAX,
  RATE_LIMIT_MIN,
  SIGNAL_TYPE_MAX_LENGTH,
  SIGNAL_TYPE_PATTERN,
  SIGNAL_TYPES_MAX_COUNT,
  URL_MAX_LENGTH,
} from '@guard/contract/endpoint-rules';

const URL_MESSAGES: Record<UrlProblem, string> = {
  too_long: `url must be at most ${URL_MAX_LENGTH} characters`,
  not_absolute: 'url must be an absolute URL',
  plain_http: 'url must use https:// (plain http:// is refused: deliveries carry signed security data)',
  not_https: 'url must use https://',
  credentials: 'url must not contain credentials: use a custom Authorization header instead',
  fragment: 'url must not contain a #fragment',
  no_host: 'url must name a host',
  bad_host: 'url host is not a valid hostname',
};

export function validateEndpointUrl(raw: string): string | undefined {
  const problem = endpointUrlProblem(raw);
  return problem && URL_MESSAGES[problem];
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
  const seen: string[] = [];
  for (const [name, value] of entries) {
    switch (headerNameProblem(name, seen)) {
      case 'invalid_name':
        return `header name ${JSON.stringify(name.slice(0, 120))} is not a valid HTTP header name`;
      case 'reserved':
        return `header ${name} is set by Guard and cannot be overridden`;
      case 'duplicate':
        return `header ${name} is given twice`;
    }
    seen.push(name);
    switch (headerValueProblem(value)) {
      case 'not_text':
        return `header ${name} must have a string value`;
      case 'too_long':
        return `header ${name} value is longer than ${HEADER_VALUE_MAX_LENGTH} characters`;
      case 'control_characters':
        return `header ${name} value contains control characters`;
    }
    total += name.length + (value as string).length;
  }
  if (total > HEADERS_MAX_TOTAL_BYTES) return `custom headers are larger than ${HEADERS_MAX_TOTAL_BYTES} bytes in all`;
  return undefined;
}
