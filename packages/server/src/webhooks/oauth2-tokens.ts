// OAuth2 access tokens for endpoints that authenticate with the client credentials grant
// (RFC 6749 §4.4; endpoint-auth.ts). A token is fetched from the endpoint's token URL through
// the endpoint's own agent (the same SSRF guard, proxy and TLS settings as its deliveries),
// cached until shortly before it expires, shared by the endpoint's concurrent attempts (one
// request in flight per endpoint), and dropped when the receiver answers 401 with it, so the
// next request fetches a new one. Cached in memory per process: each replica fetches its own.

import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { EndpointAuth } from './endpoint-auth.ts';

type ClientCredentials = Extract<EndpointAuth, { type: 'oauth2_client_credentials' }>;

/** A token response larger than this is refused. */
const TOKEN_RESPONSE_MAX_BYTES = 65_536;
/** A token is used until this long before its expiry, so none expires on its way to the receiver. */
const EXPIRY_MARGIN_MS = 30_000;
/** A token whose response gives no expires_in is kept this long. */
const DEFAULT_LIFETIME_MS = 300_000;

interface CachedToken {
  token: string;
  expiresAtMs: number;
}

/** An error of the token request, named as the attempt log shows it. */
export class TokenRequestError extends Error {
  readonly code = 'ERR_GUARD_OAUTH2';
}

export class OAuth2Tokens {
  readonly #cache = new Map<string, CachedToken>();
  readonly #fetching = new Map<string, Promise<string>>();
  readonly #now: () => number;
  /** Token requests made, for the tests and the metric. */
  requests = 0;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A valid token for the endpoint's setting: cached, or fetched (once for every concurrent caller). */
  async token(endpointId: string, auth: ClientCredentials, agent: Dispatcher, timeoutMs: number): Promise<string> {
    const key = cacheKey(endpointId, auth);
    const cached = this.#cache.get(key);
    if (cached && cached.expiresAtMs > this.#now()) return cached.token;
    let pending = this.#fetching.get(key);
    if (!pending) {
      pending = this.#fetch(auth, agent, timeoutMs).then(
        (t) => {
          this.#fetching.delete(key);
          this.#cache.set(key, t);
          return t.token;
        },
        (e: unknown) => {
          this.#fetching.delete(key);
          throw e;
        },
      );
      this.#fetching.set(key, pending);
    }
    return pending;
  }

  /** The receiver refused `token` (401): forget it, unless a newer one replaced it already. */
  invalidate(endpointId: string, auth: ClientCredentials, token: string): void {
    const key = cacheKey(endpointId, auth);
    if (this.#cache.get(key)?.token === token) this.#cache.delete(key);
  }

  /** Forgets every token of an endpoint whose setting changed or that was deleted. */
  forget(endpointId: string): void {
    for (const key of this.#cache.keys()) if (key.startsWith(`${endpointId} `)) this.#cache.delete(key);
  }

  async #fetch(auth: ClientCredentials, agent: Dispatcher, timeoutMs: number): Promise<CachedToken> {
    this.requests++;
    const url = new URL(auth.token_url);
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (auth.scope) form.set('scope', auth.scope);
    if (auth.audience) form.set('audience', auth.audience);
    // client_secret_basic (RFC 6749 §2.3.1): both parts form-urlencoded, then Basic.
    const basic = Buffer.from(
      `${encodeURIComponent(auth.client_id)}:${encodeURIComponent(auth.client_secret)}`,
      'utf8',
    ).toString('base64');
    const where = `OAuth2 token request to ${url.origin}`;
    let res: Dispatcher.ResponseData;
    try {
      res = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'user-agent': 'Guard-Webhook/1.0',
        },
        body: form.toString(),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const err = e as { name?: string; code?: string; message?: string };
      const why = err.name === 'TimeoutError' ? `timed out after ${timeoutMs / 1000} s` : (err.message ?? String(e));
      throw new TokenRequestError(`${where} failed: ${err.code ? `${err.code}: ` : ''}${why}`);
    }
    const text = await readCapped(res.body);
    let doc: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text ?? '');
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) doc = parsed as Record<string, unknown>;
    } catch {
      // named below
    }
    if (res.statusCode !== 200) {
      const error = typeof doc?.error === 'string' ? ` ${doc.error.slice(0, 100)}` : '';
      throw new TokenRequestError(`${where} failed: HTTP ${res.statusCode}${error}`);
    }
    const token = doc?.access_token;
    if (typeof token !== 'string' || token === '' || /[\r\n]/.test(token))
      throw new TokenRequestError(`${where}: the answer has no access_token`);
    const type = doc?.token_type;
    if (typeof type === 'string' && type.toLowerCase() !== 'bearer')
      throw new TokenRequestError(`${where}: token_type ${JSON.stringify(type.slice(0, 40))} is not Bearer`);
    const expiresIn = doc?.expires_in;
    const lifetimeMs =
      typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0
        ? expiresIn * 1000
        : DEFAULT_LIFETIME_MS;
    // A short-lived token is kept for half its life rather than not at all.
    const keepMs = lifetimeMs > 2 * EXPIRY_MARGIN_MS ? lifetimeMs - EXPIRY_MARGIN_MS : lifetimeMs / 2;
    return { token, expiresAtMs: this.#now() + keepMs };
  }
}

/** Per endpoint and setting: a changed client, secret, scope or URL never reuses a token. */
function cacheKey(endpointId: string, auth: ClientCredentials): string {
  return `${endpointId} ${createHash('sha256').update(JSON.stringify(auth)).digest('base64url')}`;
}

/** The body as text, or undefined when it passes the cap. */
async function readCapped(body: Dispatcher.ResponseData['body']): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > TOKEN_RESPONSE_MAX_BYTES) return undefined;
      chunks.push(chunk as Buffer);
    }
  } catch {
    return undefined;
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}
