// The agent's HTTP client: undici with EnvHttpProxyAgent as the dispatcher (HTTPS_PROXY,
// HTTP_PROXY, NO_PROXY and their lowercase forms), a retry loop driven by the pure policy of
// bundle/retry-policy.ts, and errors that name the step, the HTTP status and the service's
// own message. Clock, sleep, randomness and the diagnostic sink are handed in.

import { isIPv4, isIPv6 } from 'node:net';
import type { Readable } from 'node:stream';
import { Client, type Dispatcher, EnvHttpProxyAgent, Pool, request } from 'undici';
import { decideRetry, isRetryableStatus, MAX_ATTEMPTS, parseRetryAfter } from './bundle/retry-policy.ts';
import { AgentError } from './errors.ts';

/** Largest JSON response the agent reads (the service's bodies are a few hundred bytes). */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
/** How much of a non-JSON error body is quoted in a message. */
const EXCERPT_CHARS = 200;

export const CONNECT_TIMEOUT_MS = 30_000;
/**
 * No byte of response headers (or of the body, once it flows) for this long fails the try.
 * undici refreshes the headers timer while a request body is still being written, so a slow
 * upload is not cut by it: only a peer that stops reading or answering is.
 */
export const IDLE_TIMEOUT_MS = 120_000;

export interface HttpDeps {
  dispatcher: Dispatcher;
  userAgent: string;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  /** Diagnostics (retry notices) for people; never parsed. */
  notice: (line: string) => void;
}

/** The dispatcher of every agent request: proxies from the standard environment variables. */
export function createDispatcher(): Dispatcher {
  return new EnvHttpProxyAgent({
    connectTimeout: CONNECT_TIMEOUT_MS,
    headersTimeout: IDLE_TIMEOUT_MS,
    bodyTimeout: IDLE_TIMEOUT_MS,
    factory: guardedPoolFactory,
  });
}

/** Code of the error a dropped proxy tunnel becomes (the same code newer undici uses). */
export const PROXY_TUNNEL_ERROR_CODE = 'UND_ERR_PRX_CONN';

/**
 * undici 7 loops forever, reconnecting thousands of times a second, when a proxy accepts the
 * TCP connection but closes it during CONNECT (a proxy without CONNECT support, or one that
 * drops the upstream): the tunnel's UND_ERR_SOCKET is taken as "recoverable" and the request
 * never settles, not even on abort (nodejs/undici#3897, fixed upstream by #5441 in undici 8).
 * This factory wraps the connect function of every origin pool so that such a failure gets
 * its own code: undici then fails the request, and the agent's retry policy takes over.
 */
function guardedPoolFactory(origin: string | URL, options: object): Dispatcher {
  const opts = options as Pool.Options & { connections?: number | null };
  const connect = opts.connect;
  const guarded: Pool.Options['connect'] =
    typeof connect === 'function'
      ? (params, callback) =>
          connect(params, (error, socket) => {
            if (error && errorCode(error) === 'UND_ERR_SOCKET') {
              const tunnel = new Error(
                `the proxy closed the connection while opening a tunnel to ${params.hostname}:${params.port} (${error.message})`,
                { cause: error },
              );
              (tunnel as Error & { code: string }).code = PROXY_TUNNEL_ERROR_CODE;
              callback(tunnel, null);
            } else if (error) callback(error, null);
            else callback(null, socket as NonNullable<typeof socket>);
          })
      : connect;
  return opts.connections === 1
    ? new Client(origin, { ...opts, connect: guarded })
    : new Pool(origin, { ...opts, connect: guarded });
}

export function userAgent(version: string): string {
  return `guard-agent/${version}`;
}

export function realSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------
// URLs

/** 127.0.0.0/8, ::1 and the name localhost (the WHATWG parser already normalised 127.1, 0x7f.1…). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost') return true;
  if (isIPv4(host)) return host.split('.')[0] === '127';
  if (isIPv6(host)) return host === '::1';
  return false;
}

/**
 * Checks a URL the agent is about to send credentials or bundle bytes to: http(s) only, no
 * user:password, and plain http:// only to a loopback address (a bundle and an API key are
 * never sent in clear text over a network). `what` names the URL in messages.
 */
export function checkTransportUrl(raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AgentError('usage', `${what} ${JSON.stringify(raw)} is not a valid absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new AgentError('usage', `${what} ${raw} must be an https:// URL`);
  if (url.username || url.password) throw new AgentError('usage', `${what} must not carry a user name or password`);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    throw new AgentError(
      'insecure_url',
      `refusing ${what} ${url.origin}: plain http:// is allowed only to a loopback address ` +
        '(127.0.0.0/8, ::1, localhost); use https://',
    );
  return url;
}

/** A service base URL: checked as above, no query or fragment, without a trailing slash. */
export function normaliseBaseUrl(raw: string, what: string): string {
  const url = checkTransportUrl(raw.trim(), what);
  if (url.search || url.hash) throw new AgentError('usage', `${what} must not have a query or fragment`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

// ---------------------------------------------------------------------------------------
// Failures of one try

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

/** Transport errors that another try cannot fix (TLS trust, a body that changed length…). */
const FINAL_NETWORK_CODES = new Set([
  'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
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

/** Whether `error` came from the network (connect, TLS, socket, timeout), not from our own code. */
export function isNetworkError(error: unknown): boolean {
  if (error instanceof AgentError || error instanceof HttpStatusError) return false;
  const code = errorCode(error);
  if (code === undefined) return false;
  return (
    SYSTEM_NETWORK_CODES.has(code) ||
    FINAL_NETWORK_CODES.has(code) ||
    code.startsWith('UND_ERR') ||
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
  const text = [...new Set(parts)].join('; ') || String(error);
  return code && !text.includes(code) ? `${code}: ${text}` : text;
}

// ---------------------------------------------------------------------------------------
// Responses

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body text, at most MAX_RESPONSE_BYTES (longer bodies are cut there). */
  text: string;
}

async function readBody(body: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    if (size + b.length > limit) {
      chunks.push(b.subarray(0, limit - size));
      body.destroy();
      break;
    }
    chunks.push(b);
    size += b.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** One HTTP exchange: the body is read (bounded) so the connection can be reused. */
export async function send(
  deps: HttpDeps,
  url: string,
  init: { method: 'GET' | 'POST' | 'PUT'; headers: Record<string, string>; body?: string | Readable },
): Promise<HttpResponse> {
  const res = await request(url, {
    method: init.method,
    headers: init.headers,
    body: init.body,
    dispatcher: deps.dispatcher,
  });
  const text = await readBody(res.body, MAX_RESPONSE_BYTES);
  return { status: res.statusCode, headers: res.headers, text };
}

/** Turns a response the step does not accept into an HttpStatusError carrying the service's message. */
export function statusError(res: HttpResponse, nowMs: number): HttpStatusError {
  let code: string | undefined;
  let detail: string;
  const parsed = parseApiError(res.text);
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

/** `{"error": {"code", "message"}}` (DESIGN §4), or undefined. */
export function parseApiError(text: string): { code: string; message: string } | undefined {
  try {
    const value = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const e = value?.error;
    if (e && typeof e === 'object' && typeof e.code === 'string' && typeof e.message === 'string')
      return { code: clean(e.code, 80), message: clean(e.message, 500) };
  } catch {
    // not JSON: the caller quotes an excerpt
  }
  return undefined;
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

export function parseJson(res: HttpResponse, step: string): unknown {
  try {
    return JSON.parse(res.text);
  } catch {
    throw new AgentError(
      'server',
      `${step} failed: HTTP ${res.status} with a body that is not JSON: ${excerpt(res.text)}`,
    );
  }
}

// ---------------------------------------------------------------------------------------
// Retries

export interface RetryOptions {
  /** Names the step in messages: "presign", "upload (PUT)", "register", "enrol". */
  step: string;
  /** Absolute time (ms) after which no retry is started (the presigned URL's expiry). */
  deadlineMs?: number;
  /** Appended to the final error of a 401 (how to recover). */
  unauthorizedHint?: string;
  maxAttempts?: number;
}

/**
 * Runs `attempt` until it returns, retrying on network errors and retryable statuses
 * (429, 5xx) as decideRetry says. Any other error ends the step at once: an HttpStatusError
 * becomes AgentError('server'), a network error AgentError('network'), an AgentError passes.
 */
export async function withRetries<T>(
  deps: HttpDeps,
  options: RetryOptions,
  attempt: (n: number) => Promise<T>,
): Promise<T> {
  const max = options.maxAttempts ?? MAX_ATTEMPTS;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      let retryable: boolean;
      let what: string;
      let retryAfterMs: number | undefined;
      if (error instanceof HttpStatusError) {
        retryable = isRetryableStatus(error.status);
        what = error.describe();
        retryAfterMs = error.retryAfterMs;
      } else if (isNetworkError(error)) {
        retryable = !FINAL_NETWORK_CODES.has(errorCode(error) ?? '');
        what = describeNetworkError(error);
      } else {
        throw error;
      }
      const decision = retryable
        ? decideRetry({
            attempt: n,
            random: deps.random,
            nowMs: deps.now().getTime(),
            retryAfterMs,
            deadlineMs: options.deadlineMs,
            maxAttempts: max,
          })
        : undefined;
      if (decision?.retry) {
        deps.notice(
          `${options.step}: ${what}; retrying in ${(decision.delayMs / 1000).toFixed(1)} s (attempt ${n + 1} of ${max})`,
        );
        await deps.sleep(decision.delayMs);
        continue;
      }
      const tail = decision && !decision.retry ? ` (${decision.reason})` : '';
      if (error instanceof HttpStatusError) {
        const hint = error.status === 401 && options.unauthorizedHint ? `; ${options.unauthorizedHint}` : '';
        throw new AgentError('server', `${options.step} failed: ${what}${tail}${hint}`, { cause: error });
      }
      throw new AgentError('network', `${options.step} failed: ${what}${tail}`, { cause: error });
    }
  }
}

/** POST a JSON body with the agent's credentials; returns the parsed body of an accepted status. */
export async function postJson(
  deps: HttpDeps,
  options: RetryOptions & { url: string; apiKey?: string; body: unknown; accept: (status: number) => boolean },
): Promise<{ status: number; json: unknown }> {
  const body = JSON.stringify(options.body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'user-agent': deps.userAgent,
  };
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
  return withRetries(deps, options, async () => {
    const res = await send(deps, options.url, { method: 'POST', headers, body });
    if (!options.accept(res.status)) throw statusError(res, deps.now().getTime());
    return { status: res.status, json: parseJson(res, `${options.step}`) };
  });
}
