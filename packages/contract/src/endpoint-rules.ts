// The rules of a webhook endpoint's URL and custom headers (DESIGN §5), written once: the
// server enforces them on create and on every edit, and the console's form checks them as
// the user types. Each check answers a problem code, so that each side words it for its own
// reader (the API's message, the form's hint). Pure, with no Node.js import: it runs in the
// browser too. The SSRF check of an IP-literal host is the server's alone (its address ranges).

export const NAME_MAX_LENGTH = 100;
export const URL_MAX_LENGTH = 2048;
export const HEADERS_MAX_COUNT = 20;
export const HEADER_NAME_MAX_LENGTH = 100;
export const HEADER_VALUE_MAX_LENGTH = 4096;
export const HEADERS_MAX_TOTAL_BYTES = 16 * 1024;
/** An endpoint's rate limit, deliveries per second: one per 100 s at the slowest. */
export const RATE_LIMIT_MIN = 0.01;
export const RATE_LIMIT_MAX = 10_000;

/** What a signal type looks like (POST /v1/signals, an endpoint's signal_types): one rule. */
export const SIGNAL_TYPE_PATTERN = '^[a-z0-9][a-z0-9_.-]*$';
export const SIGNAL_TYPE_MAX_LENGTH = 100;
/** An endpoint lists at most this many signal types. */
export const SIGNAL_TYPES_MAX_COUNT = 50;

export function isSignalType(text: string): boolean {
  return text.length > 0 && text.length <= SIGNAL_TYPE_MAX_LENGTH && new RegExp(SIGNAL_TYPE_PATTERN).test(text);
}

/** The events an endpoint can subscribe to (DESIGN §5). */
export const EVENT_TYPES = [
  'signal_created',
  'test',
  'endpoint.failing',
  'endpoint.disabled',
  'endpoint.certificate_expiring',
  'audit.event',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * What a new endpoint receives unless told otherwise: what every endpoint received before
 * subscriptions existed (the operational events are opt-in), every severity and signal type,
 * no rate limit. The server stores them; the console's form starts from them.
 */
export const ENDPOINT_DEFAULTS: {
  readonly event_types: readonly EventType[];
  readonly min_severity: number;
  readonly signal_types: null;
  readonly rate_limit: null;
} = { event_types: ['signal_created', 'test'], min_severity: 1, signal_types: null, rate_limit: null };

/** Headers a delivery sets itself, or that belong to the transport: never custom. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
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
  // The Standard Webhooks headers, signed with the endpoint's secret (DESIGN §5).
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

/** RFC 7230 token characters: what a header name may hold. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;
/** The URL parser writes every IPv4 form (2130706433, 0x7f.1) as a dotted quad. */
const IPV4 = /^(\d{1,3}\.){3}\d{1,3}$/;

export type UrlProblem =
  | 'too_long'
  | 'not_absolute'
  | 'plain_http'
  | 'not_https'
  | 'credentials'
  | 'fragment'
  | 'no_host'
  | 'bad_host';

/** What is wrong with an endpoint URL, or undefined when it may be used. */
export function endpointUrlProblem(raw: string): UrlProblem | undefined {
  if (raw.length > URL_MAX_LENGTH) return 'too_long';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not_absolute';
  }
  if (url.protocol === 'http:') return 'plain_http';
  if (url.protocol !== 'https:') return 'not_https';
  if (url.username || url.password) return 'credentials';
  if (url.hash) return 'fragment';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) return 'no_host';
  // An IPv6 literal (the parser has checked it), an IPv4 literal, or a DNS name.
  if (!host.includes(':') && !IPV4.test(host) && !HOSTNAME.test(host)) return 'bad_host';
  return undefined;
}

export type HeaderNameProblem = 'invalid_name' | 'reserved' | 'duplicate';
export type HeaderValueProblem = 'not_text' | 'too_long' | 'control_characters';

/** What is wrong with a custom header's name, given the names before it (any case). */
export function headerNameProblem(name: string, earlier: readonly string[]): HeaderNameProblem | undefined {
  const lower = name.toLowerCase();
  if (name.length === 0 || name.length > HEADER_NAME_MAX_LENGTH || !TOKEN.test(name)) return 'invalid_name';
  if (RESERVED_HEADERS.has(lower) || lower.startsWith('guard-')) return 'reserved';
  if (earlier.some((e) => e.toLowerCase() === lower)) return 'duplicate';
  return undefined;
}

/** What is wrong with a custom header's value: visible text, space and tab only (no CR/LF: header injection). */
export function headerValueProblem(value: unknown): HeaderValueProblem | undefined {
  if (typeof value !== 'string') return 'not_text';
  if (value.length > HEADER_VALUE_MAX_LENGTH) return 'too_long';
  if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) return 'control_characters';
  return undefined;
}
