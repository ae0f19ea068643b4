// The agent's HTTP client: node:http and node:https, one keep-alive Agent per scheme with
// node's built-in proxy support (proxy-settings.ts turns HTTPS_PROXY, HTTP_PROXY, NO_PROXY and
// their lowercase forms into its `proxyEnv`), a retry loop driven by the pure policy of
// bundle/retry-policy.ts, and errors that name the step, the HTTP status and the service's
// own message. Clock, sleep, randomness and the diagnostic sink are handed in.
//
// Why not undici (the server's delivery client): loading it costs the agent ~28 MiB of RSS,
// and undici 7 needs a workaround for proxies that drop a CONNECT (nodejs/undici#3897).

import type * as HttpModule from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import type { Readable } from 'node:stream';
import { parseRetryAfter } from '@guard/contract/retry-after';
import { firstFault } from '@guard/contract/schema-check';
import { ApiErrorBody } from '@guard/contract/wire';
import { decideRetry, isRetryableStatus, MAX_ATTEMPTS } from './bundle/retry-policy.ts';
import { AgentError } from './errors.ts';
import type { ProxySettings } from './proxy-settings.ts';

// Not `import http from 'node:http'`: the ESM facade of node:http reads every export, and its
// lazy WebSocket/EventSource getters then load node's bundled undici (+9.5 MiB of RSS).
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

/** Largest JSON response the agent reads (the service's bodies are a few hundred bytes). */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
/** How much of a non-JSON error body is quoted in a message. */
const EXCERPT_CHARS = 200;

export const CONNECT_TIMEOUT_MS = 30_000;
/**
 * No socket activity for this long fails the try: no byte of the response, and no byte of a
 * request body taken by the peer (a slow upload is not cut by it, only a peer that stops
 * reading or answering is).
 */
export const IDLE_TIMEOUT_MS = 120_000;

/** The connection pools of every agent request, one per scheme. */
export interface HttpAgents {
  http: HttpModule.Agent;
  https: HttpModule.Agent;
}

export interface HttpDeps {
  agents: HttpAgents;
  userAgent: string;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  /** Diagnostics (retry notices) for people; never parsed. */
  notice: (line: string) => void;
}

/**
 * Keep-alive agents (presign, PUT and register share a connection when they can) that go
 * through the proxies `proxy` names: an https:// URL through a CONNECT tunnel (TLS end to end
 * inside it), an http:// URL (loopback only, checkTransportUrl) forwarded in absolute form.
 */
export function createAgents(proxy: ProxySettings): HttpAgents {
  try {
    return {
      http: new http.Agent({ keepAlive: true, proxyEnv: { ...proxy } }),
      https: new https.Agent({ keepAlive: true, proxyEnv: { ...proxy } }),
    };
  } catch (error) {
    throw new AgentError('usage', `the proxy setting is not valid: ${(error as Error).message}`, { cause: error });
  }
}

export function destroyAgents(agents: HttpAgents): void {
  agents.http.destroy();
  agents.https.destroy();
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

function codedError(code: string, message: string, cause?: unknown): Error {
  return Object.assign(new Error(message, { cause }), { code });
}

/**
 * Errors that do not say where to get a message that does: a proxy's tunnel refused (names the
 * target), an https:// URL answered in plain HTTP (says so, and what to try; never retried:
 * another try gets the same answer).
 */
function withTarget(error: unknown, target: URL): unknown {
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

// ---------------------------------------------------------------------------------------
// Exchanges

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body text, at most MAX_RESPONSE_BYTES (longer bodies are cut there). */
  text: string;
}

/**
 * Streams a request body: calls `write` for each chunk in order and resolves once all are
 * written. `write` resolves when the socket has taken the chunk (its buffer may then be
 * reused), and rejects once the exchange is over (an early answer, a failed connection): the
 * writer then stops. Anything else the writer throws fails the exchange with that error.
 */
export type BodyWriter = (write: (chunk: Buffer) => Promise<void>) => Promise<void>;

/** Rejection of `write` after the exchange ended; never surfaces. */
const EXCHANGE_OVER = new Error('the exchange is over');

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

/**
 * One HTTP exchange: the response body is read (bounded) so the connection can be reused.
 * A body given as a BodyWriter is streamed; its headers must carry its exact Content-Length
 * (checked by node:http: a body of another length fails the exchange). An answer that comes
 * before the body is fully sent ends the upload and closes the connection.
 */
export function send(
  deps: HttpDeps,
  url: string,
  init: { method: 'GET' | 'POST' | 'PUT'; headers: Record<string, string>; body?: string | BodyWriter },
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    const req = (secure ? https : http).request(target, {
      method: init.method,
      headers: init.headers,
      agent: secure ? deps.agents.https : deps.agents.http,
    });
    // Typed on ServerResponse only; node:http checks it on every OutgoingMessage (write and end throw).
    (req as HttpModule.ClientRequest & { strictContentLength: boolean }).strictContentLength = true;
    let over = false;
    let bodySent = false;
    let endExchange: (error: Error) => void = () => {};
    const exchangeOver = new Promise<never>((_, r) => {
      endExchange = r;
    });
    exchangeOver.catch(() => {});
    const finish = () => {
      over = true;
      endExchange(EXCHANGE_OVER);
    };
    const fail = (error: unknown) => {
      if (over) return;
      finish();
      req.destroy();
      reject(withTarget(error, target));
    };
    req.on('error', fail);
    req.setTimeout(IDLE_TIMEOUT_MS, () =>
      req.destroy(codedError('ETIMEDOUT', `no progress for ${IDLE_TIMEOUT_MS / 1000} s from ${target.host}`)),
    );
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(
        () =>
          req.destroy(codedError('ETIMEDOUT', `connecting to ${target.host} took over ${CONNECT_TIMEOUT_MS / 1000} s`)),
        CONNECT_TIMEOUT_MS,
      );
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    req.on('response', (res) => {
      readBody(res, MAX_RESPONSE_BYTES).then((text) => {
        if (over) return;
        finish();
        if (!bodySent) req.destroy(); // answered early: the rest of the body is not sent
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text });
      }, fail);
    });
    if (typeof init.body !== 'function') {
      bodySent = true;
      req.end(init.body);
      return;
    }
    const write = (chunk: Buffer): Promise<void> => {
      if (over) return Promise.reject(EXCHANGE_OVER);
      const written = new Promise<void>((ok, ko) => {
        req.write(chunk, (error) => (error ? ko(error) : ok()));
      });
      written.catch(() => {}); // a late failure after the race is lost is the exchange's, handled by fail
      return Promise.race([written, exchangeOver]);
    };
    init.body(write).then(
      () => {
        if (over) return;
        bodySent = true;
        try {
          req.end();
        } catch (error) {
          fail(error);
        }
      },
      (error) => {
        if (error !== EXCHANGE_OVER) fail(error);
      },
    );
  });
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

/** The contract's error body `{"error": {"code", "message"}}` (DESIGN §4), or undefined. */
export function parseApiError(text: string): { code: string; message: string } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined; // not JSON: the caller quotes an excerpt
  }
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
