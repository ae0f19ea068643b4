// The endpoint form's checks, run as the user types so a wrong URL or header is named on its
// field before anything is sent. They mirror the server's rules (packages/server/src/webhooks/
// endpoint-rules.ts; test/endpoint-rules.test.ts runs both over the same inputs), which stay
// the authority: the server refuses whatever slips past these.

export const NAME_MAX_LENGTH = 100;
export const URL_MAX_LENGTH = 2048;
export const HEADERS_MAX_COUNT = 20;
const HEADER_NAME_MAX_LENGTH = 100;
const HEADER_VALUE_MAX_LENGTH = 4096;

/** Headers a delivery sets itself or that belong to the transport. */
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
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;
const IPV4 = /^(\d{1,3}\.){3}\d{1,3}$/;

export function nameProblem(name: string): string | undefined {
  if (name.trim() === '') return 'Give the endpoint a name, e.g. “SIEM ingest”.';
  if (name.length > NAME_MAX_LENGTH) return `Use at most ${NAME_MAX_LENGTH} characters.`;
  return undefined;
}

export function urlProblem(raw: string): string | undefined {
  if (raw.trim() === '') return 'Enter the https:// URL that receives the deliveries.';
  if (raw.length > URL_MAX_LENGTH) return `Use at most ${URL_MAX_LENGTH} characters.`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'Enter a full URL starting with https://, e.g. https://hooks.example.com/guard.';
  }
  if (url.protocol === 'http:')
    return 'Use https://: plain http:// is refused because deliveries carry signed security data.';
  if (url.protocol !== 'https:') return 'The URL must start with https://.';
  if (url.username || url.password)
    return 'Remove the user name and password from the URL; send credentials in a custom Authorization header.';
  if (url.hash) return 'Remove the #fragment: it is never sent to the receiver.';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) return 'The URL must name a host.';
  if (!host.includes(':') && !IPV4.test(host) && !HOSTNAME.test(host)) return 'The host name is not valid.';
  return undefined;
}

export interface HeaderRow {
  name: string;
  value: string;
}

/** A problem of one header row, given the rows before it (for duplicates). */
export function headerProblem(row: HeaderRow, earlier: HeaderRow[]): { name?: string; value?: string } {
  const lower = row.name.trim().toLowerCase();
  if (row.name.trim() === '') return { name: 'Enter a header name, or remove this row.' };
  if (row.name.length > HEADER_NAME_MAX_LENGTH || !TOKEN.test(row.name.trim()))
    return { name: 'Use letters, digits and - only (an HTTP header name), e.g. Authorization.' };
  if (RESERVED.has(lower) || lower.startsWith('guard-'))
    return { name: `${row.name.trim()} is set by Guard itself and cannot be replaced.` };
  if (earlier.some((e) => e.name.trim().toLowerCase() === lower))
    return { name: 'This header is already listed above.' };
  if (row.value.length > HEADER_VALUE_MAX_LENGTH)
    return { value: `Use at most ${HEADER_VALUE_MAX_LENGTH} characters.` };
  if (/[\r\n\0]/.test(row.value) || !/^[\t\x20-\x7e\x80-\xff]*$/.test(row.value))
    return { value: 'Remove line breaks and control characters.' };
  return {};
}

/** The rows as the API's headers object, names trimmed. */
export function headersObject(rows: HeaderRow[]): Record<string, string> {
  return Object.fromEntries(rows.map((r) => [r.name.trim(), r.value]));
}
