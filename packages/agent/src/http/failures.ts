// Failures of one try: a response with a status the step does not accept (HttpStatusError,
// carrying the service's own message and its Retry-After), and errors of the network, sorted
// into those another try may fix and those it cannot. Every text that reaches the operator's
// terminal from the other side is cut short and stripped of control characters.

import { parseRetryAfter } from '@guard/contract/retry-after';
import { ApiErrorBody } from '@guard/contract/wire';
import { AgentError } from '../errors.ts';
import type { HttpResponse } from './response.ts';
import { isLoopbackHost } from './url-policy.ts';

/** How much of a non-JSON error body is quoted in a message. */
const EXCERPT_CHARS = 200;

/** A response with a status the step does not accept. */
export class HttpStatusError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(status: number, detail: string, code: string | undefined, retryAfterMs: number | undefined) {
    super(detail);
    this.name = 'HttpStatusError';
    this.status = status;
    this.code = code;
    this.retryAfterMs = retryAfterMs;
  }
  describe(): string {
    return `HTTP ${this.status}${this.code ? ` ${this.code}` : ''}${this.message ? `: ${this.message}` : ''}`;
  }
}

/** An https:// URL whose server answered in plain HTTP (our code, for withTarget's message). */
export const NOT_TLS_ERROR_CODE = 'ERR_GUARD_NOT_TLS';

/** Transport errors that another try cannot fix (TLS trust, a body that changed length…). */
const FINAL_NETWORK_CODES = new Set([
  'ERR_HTTP_CONTENT_LENGTH_MISMATCH',
  'ERR_INVALID_URL',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_PACKET_LENGTH_TOO_LONG',
  NOT_TLS_ERROR_CODE,
]);

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' ? code : undefined;
}

/** System error codes of sockets and name resolution (file errors such as ENOENT are not among them). */
const SYSTEM_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENETRESET',
  'EADDRNOTAVAIL',
  'EPROTO',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'EAI_NONAME',
]);

/** node:http's code for a proxy that refused or dropped a CONNECT tunnel. */
export const PROXY_TUNNEL_ERROR_CODE = 'ERR_PROXY_TUNNEL';

/** A network error another try cannot fix (TLS trust, a body that changed length, not TLS at all…). */
export function isFinalNetworkError(error: unknown): boolean {
  return FINAL_NETWORK_CODES.has(errorCode(error) ?? '');
}

/** Whether `error` came from the network (connect, TLS, socket, proxy, timeout), not from our own code. */
export function isNetworkError(error: unknown): boolean {
  if (error instanceof AgentError || error instanceof HttpStatusError) return false;
  const code = errorCode(error);
  if (code === undefined) return false;
  return (
    SYSTEM_NETWORK_CODES.has(code) ||
    FINAL_NETWORK_CODES.has(code) ||
    code === PROXY_TUNNEL_ERROR_CODE ||
    code.startsWith('ERR_TLS') ||
    code.startsWith('ERR_SSL')
  );
}

export function describeNetworkError(error: unknown): string {
  const e = error as Error & { code?: string; errors?: Error[]; cause?: unknown };
  const parts: string[] = [];
  if (e instanceof AggregateError && e.errors?.length) parts.push(...e.errors.map((x) => x.message));
  else if (e?.message) parts.push(e.message);
  const code = errorCode(e);
  // OpenSSL's texts end in a newline: one line per message.
  const text = clean([...new Set(parts)].join('; ').trim(), 500) || String(error);
  return code && !text.includes(code) && code !== NOT_TLS_ERROR_CODE ? `${code}: ${text}` : text;
}

/**
 * Whether a TLS handshake failed because the server answered in plain HTTP: OpenSSL reads the
 * start of "HTTP/1.1 400 …" as a TLS record header with a wrong version (or a huge length).
 * OpenSSL says so only in its message text (node reports a write error as a bare EPROTO).
 */
function isPlainHttpAnswer(error: unknown): boolean {
  const code = errorCode(error);
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') return true;
  return code === 'EPROTO' && /wrong version number|packet length too long/i.test((error as Error).message ?? '');
}

export function codedError(code: string, message: string, cause?: unknown): Error {
  return Object.assign(new Error(message, { cause }), { code });
}

/**
 * Errors that do not say where to get a message that does: a proxy's tunnel refused (names the
 * target), an https:// URL answered in plain HTTP (says so, and what to try; never retried:
 * another try gets the same answer).
 */
export function withTarget(error: unknown, target: URL): unknown {
  if (errorCode(error) === PROXY_TUNNEL_ERROR_CODE)
    return codedError(
      PROXY_TUNNEL_ERROR_CODE,
      `the proxy did not open a tunnel to ${target.host}: ${(error as Error).message}`,
      error,
    );
  if (target.protocol === 'https:' && isPlainHttpAnswer(error)) {
    const hint = isLoopbackHost(target.hostname)
      ? `try http://${target.host}`
      : 'is the port right? it answered like a plain-HTTP server';
    return codedError(
      NOT_TLS_ERROR_CODE,
      `the server at ${target.origin} did not speak TLS (is the URL's scheme right? ${hint})`,
      error,
    );
  }
  return error;
}

/** Turns a response the step does not accept into an HttpStatusError carrying the service's message. */
export async function statusError(res: HttpResponse, nowMs: number): Promise<HttpStatusError> {
  let code: string | undefined;
  let detail: string;
  const parsed = await parseApiError(res.text);
  const location = res.headers.location;
  if (parsed) {
    code = parsed.code;
    detail = parsed.message;
  } else if (res.status >= 300 && res.status < 400 && typeof location === 'string') {
    detail = `redirect to ${clean(location, EXCERPT_CHARS)} (redirects are not followed)`;
  } else {
    detail = excerpt(res.text);
  }
  return new HttpStatusError(res.status, detail, code, parseRetryAfter(res.headers['retry-after'], nowMs));
}

/**
 * The contract's error body `{"error": {"code", "message"}}` (DESIGN §4), or undefined. The
 * schema checker is loaded with the first body to check, not with the client: an upload
 * checks nothing before the local check, where its RSS peaks (decision 0005).
 */
export async function parseApiError(text: string): Promise<{ code: string; message: string } | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined; // not JSON: the caller quotes an excerpt
  }
  const { firstFault } = await import('@guard/contract/schema-check');
  if (firstFault(ApiErrorBody, value)) return undefined;
  const { code, message } = (value as ApiErrorBody).error;
  return { code: clean(code, 80), message: clean(message, 500) };
}

/** A short, single-line, printable excerpt of an unexpected body. */
export function excerpt(text: string): string {
  const t = clean(text.trim(), EXCERPT_CHARS);
  return t === '' ? '(empty body)' : JSON.stringify(t);
}

/** Control characters (terminal escapes, newlines) never reach the operator's terminal verbatim. */
function clean(text: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
