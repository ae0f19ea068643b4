// The endpoint form's checks, run as the user types so a wrong URL or header is named on its
// field before anything is sent. The rules are the server's own (@guard/contract's
// endpoint-rules, which the server enforces); this file words their problems as hints.

import {
  endpointUrlProblem,
  HEADER_VALUE_MAX_LENGTH,
  headerNameProblem,
  headerValueProblem,
  isSignalType,
  NAME_MAX_LENGTH,
  RATE_LIMIT_MAX,
  RATE_LIMIT_MIN,
  SIGNAL_TYPES_MAX_COUNT,
  URL_MAX_LENGTH,
  type UrlProblem,
} from '@guard/contract/endpoint-rules';

export { HEADERS_MAX_COUNT, NAME_MAX_LENGTH, URL_MAX_LENGTH } from '@guard/contract/endpoint-rules';

export function nameProblem(name: string): string | undefined {
  if (name.trim() === '') return 'Give the endpoint a name, e.g. “SIEM ingest”.';
  if (name.length > NAME_MAX_LENGTH) return `Use at most ${NAME_MAX_LENGTH} characters.`;
  return undefined;
}

const URL_HINTS: Record<UrlProblem, string> = {
  too_long: `Use at most ${URL_MAX_LENGTH} characters.`,
  not_absolute: 'Enter a full URL starting with https://, e.g. https://hooks.example.com/guard.',
  plain_http: 'Use https://: plain http:// is refused because deliveries carry signed security data.',
  not_https: 'The URL must start with https://.',
  credentials: 'Remove the user name and password from the URL; send credentials in a custom Authorization header.',
  fragment: 'Remove the #fragment: it is never sent to the receiver.',
  no_host: 'The URL must name a host.',
  bad_host: 'The host name is not valid.',
};

export function urlProblem(raw: string): string | undefined {
  if (raw.trim() === '') return 'Enter the https:// URL that receives the deliveries.';
  const problem = endpointUrlProblem(raw);
  return problem && URL_HINTS[problem];
}

export interface HeaderRow {
  name: string;
  value: string;
}

/** A problem of one header row, given the rows before it (for duplicates). */
export function headerProblem(row: HeaderRow, earlier: HeaderRow[]): { name?: string; value?: string } {
  const name = row.name.trim();
  if (name === '') return { name: 'Enter a header name, or remove this row.' };
  switch (
    headerNameProblem(
      name,
      earlier.map((e) => e.name.trim()),
    )
  ) {
    case 'invalid_name':
      return { name: 'Use letters, digits and - only (an HTTP header name), e.g. Authorization.' };
    case 'reserved':
      return { name: `${name} is set by Guard itself and cannot be replaced.` };
    case 'duplicate':
      return { name: 'This header is already listed above.' };
  }
  switch (headerValueProblem(row.value)) {
    case 'too_long':
      return { value: `Use at most ${HEADER_VALUE_MAX_LENGTH} characters.` };
    case 'control_characters':
    case 'not_text':
      return { value: 'Remove line breaks and control characters.' };
  }
  return {};
}

/** The rows as the API's headers object, names trimmed. */
export function headersObject(rows: HeaderRow[]): Record<string, string> {
  return Object.fromEntries(rows.map((r) => [r.name.trim(), r.value]));
}

/** The rate limit field: empty for none, else deliveries per second within the server's bounds. */
export function rateLimitProblem(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n < RATE_LIMIT_MIN || n > RATE_LIMIT_MAX)
    return `A number of deliveries per second from ${RATE_LIMIT_MIN} (one every ${1 / RATE_LIMIT_MIN} s) to ${RATE_LIMIT_MAX}`;
  return undefined;
}

/** The signal types field as a list: split on commas and white space, each type once. */
export function signalTypesOf(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}

export function signalTypesProblem(text: string): string | undefined {
  const types = signalTypesOf(text);
  const bad = types.find((t) => !isSignalType(t));
  if (bad) return `“${bad}” is not a signal type: lowercase letters, digits, “_”, “.” and “-”`;
  if (types.length > SIGNAL_TYPES_MAX_COUNT) return `At most ${SIGNAL_TYPES_MAX_COUNT} signal types`;
  return undefined;
}
