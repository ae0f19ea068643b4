// The tenant's OpenID Connect provider, through openid-client: its discovery document read
// (and kept ten minutes per connection, with the keys openid-client fetches for it), the
// authorization URL of a sign-in, and the code exchanged for verified claims.
// Issuers are https://, or http:// on a loopback address only (development and tests):
// openid-client's insecure-request allowance is given to exactly those.

import { isIP } from 'node:net';
import * as client from 'openid-client';

/** Discovery and every later request to the provider give up after this long. */
const PROVIDER_TIMEOUT_SECONDS = 10;
/** A discovered configuration is reused this long (its keys are re-fetched by openid-client on an unknown kid). */
const CONFIGURATION_TTL_MS = 10 * 60_000;
const CONFIGURATIONS_KEPT = 500;

export interface OidcClient {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** Why an issuer URL is refused before anything is fetched, or undefined when it may be used. */
export function issuerProblem(issuer: string): string | undefined {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'issuer must be an absolute URL, e.g. https://login.example.com';
  }
  if (url.username || url.password) return 'issuer must not carry a user name or password';
  if (url.search || url.hash) return 'issuer must not carry a query or a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return undefined;
  return 'issuer must be an https:// URL (http:// only on a loopback address, for development)';
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** The provider could not be reached, or what it answered is not an OpenID Provider's. */
export class ProviderUnavailable extends Error {}

/**
 * The providers' configurations, from their discovery documents (openid-client checks that a
 * document's issuer is exactly the one asked for). A stored connection's configuration is kept
 * ten minutes under `cacheKey` (the connection's version, its update time and sealed secret: a
 * changed connection is discovered afresh), with the keys openid-client fetched for it.
 */
export class ProviderConfigurations {
  readonly #kept = new Map<string, { config: client.Configuration; at: number }>();
  readonly #now: () => Date;

  constructor(now: () => Date) {
    this.#now = now;
  }

  async discover(c: OidcClient, cacheKey?: string): Promise<client.Configuration> {
    const now = this.#now().getTime();
    const key = cacheKey && `${cacheKey}\0${c.issuer}\0${c.clientId}`;
    const kept = key ? this.#kept.get(key) : undefined;
    if (kept && now - kept.at < CONFIGURATION_TTL_MS) return kept.config;
    const config = await discover(c);
    if (key) {
      if (this.#kept.size >= CONFIGURATIONS_KEPT) this.#kept.delete(this.#kept.keys().next().value as string);
      this.#kept.set(key, { config, at: now });
    }
    return config;
  }
}

async function discover(c: OidcClient): Promise<client.Configuration> {
  const url = new URL(c.issuer);
  let config: client.Configuration;
  try {
    config = await client.discovery(url, c.clientId, undefined, client.ClientSecretBasic(c.clientSecret), {
      timeout: PROVIDER_TIMEOUT_SECONDS,
      ...(url.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {}),
    });
  } catch (error) {
    throw new ProviderUnavailable(describe(error), { cause: error });
  }
  if (!config.serverMetadata().authorization_endpoint || !config.serverMetadata().token_endpoint)
    throw new ProviderUnavailable('the discovery document names no authorization_endpoint or token_endpoint');
  return config;
}

/** A short, secret-free account of why a request to the provider failed. */
export function describe(error: unknown): string {
  const parts: string[] = [];
  for (let e = error as { message?: unknown; code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 4; i++) {
    const code = typeof e.code === 'string' ? ` (${e.code})` : '';
    if (typeof e.message === 'string' && e.message) parts.push(`${e.message}${code}`);
    e = e.cause as typeof e;
  }
  return (parts.join(': ') || String(error)).slice(0, 300);
}

/** The scopes a sign-in asks for: `groups` too when the provider lists it. */
export function scopesFor(config: client.Configuration): string {
  const supported = config.serverMetadata().scopes_supported;
  return ['openid', 'email', 'profile', ...(supported?.includes('groups') ? ['groups'] : [])].join(' ');
}

export interface SignInRequest {
  state: string;
  nonce: string;
  verifier: string;
}

/** A new sign-in's state, nonce and PKCE verifier. */
export function newSignInRequest(): SignInRequest {
  return { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier() };
}

export async function authorizationUrl(
  config: client.Configuration,
  request: SignInRequest,
  redirectUri: string,
  loginHint: string,
): Promise<URL> {
  return client.buildAuthorizationUrl(config, {
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: scopesFor(config),
    state: request.state,
    nonce: request.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(request.verifier),
    code_challenge_method: 'S256',
    login_hint: loginHint,
  });
}

/** What the provider said of the person, once the ID token was verified. */
export type Claims = Record<string, unknown>;

/**
 * Exchanges the code of `callbackUrl` (the callback's own URL: its query and the redirect URI
 * it was sent to) and verifies the ID token: its signature against the provider's JWKS, iss,
 * aud, exp, iat and nonce (openid-client). The claims are the ID token's, completed from the
 * UserInfo endpoint when it lacks email or groups (a provider may keep them there).
 */
export async function exchangeCode(
  config: client.Configuration,
  callbackUrl: URL,
  request: SignInRequest,
): Promise<Claims> {
  const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: request.verifier,
    expectedState: request.state,
    expectedNonce: request.nonce,
    idTokenExpected: true,
  });
  const idToken = tokens.claims();
  if (!idToken) throw new Error('the provider returned no ID token');
  const claims: Claims = { ...idToken };
  if ((claims.email === undefined || claims.groups === undefined) && config.serverMetadata().userinfo_endpoint) {
    try {
      // openid-client checks that UserInfo's sub is the ID token's.
      const info = await client.fetchUserInfo(config, tokens.access_token, idToken.sub);
      for (const [k, v] of Object.entries(info)) if (claims[k] === undefined) claims[k] = v;
    } catch (error) {
      // Only groups were wanted (the ID token has the email): sign in without them, the role
      // left as it is, rather than not at all.
      if (claims.email === undefined) throw error;
    }
  }
  return claims;
}
