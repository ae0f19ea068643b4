// How a delivery authenticates to its receiver (issue 21, item 3): HTTP Basic, or an OAuth2
// access token got with the client credentials grant (RFC 6749 §4.4) from the endpoint's
// token URL (oauth2-tokens.ts fetches and caches it). The setting holds a password or a client
// secret, so it is stored sealed as a whole (AES-256-GCM, the endpoint id and a purpose as
// associated data), like the custom headers; views show everything but the secret part.

import { badRequest } from '../kernel/errors.ts';
import { open, seal } from '../kernel/secret-box.ts';
import { maskUrl } from './endpoint-headers.ts';
import { validateEndpointAddress, validateEndpointUrl } from './endpoint-rules.ts';

export const AUTH_TEXT_MAX_LENGTH = 1024;

export type EndpointAuth =
  | { type: 'basic'; username: string; password: string }
  | {
      type: 'oauth2_client_credentials';
      token_url: string;
      client_id: string;
      client_secret: string;
      scope: string | null;
      audience: string | null;
    };

/** The request's `auth`: the secret part may be left out to keep the one set before (same type). */
export type EndpointAuthInput =
  | { type: 'basic'; username: string; password?: string }
  | {
      type: 'oauth2_client_credentials';
      token_url: string;
      client_id: string;
      client_secret?: string;
      scope?: string | null;
      audience?: string | null;
    };

export type EndpointAuthView =
  | { type: 'basic'; username: string }
  | {
      type: 'oauth2_client_credentials';
      token_url: string;
      client_id: string;
      scope: string | null;
      audience: string | null;
    }
  | null;

const aad = (endpointId: string) => `${endpointId}/auth`;

export function sealAuth(key: Buffer, endpointId: string, auth: EndpointAuth): string {
  return seal(key, JSON.stringify(auth), aad(endpointId));
}

export function openAuth(key: Buffer, endpointId: string, sealed: string | null | undefined): EndpointAuth | null {
  return sealed ? (JSON.parse(open(key, sealed, aad(endpointId))) as EndpointAuth) : null;
}

/**
 * The checked setting a request's `auth` makes, given the one stored (opened). A token URL
 * follows an endpoint URL's rules (https, no credentials, a public address unless private
 * targets are allowed): the server connects to it as it does to the receiver.
 */
export function authFromInput(
  input: EndpointAuthInput,
  current: EndpointAuth | null,
  allowPrivate: boolean,
): EndpointAuth {
  const kept = current?.type === input.type ? current : undefined;
  if (input.type === 'basic') {
    const password = input.password ?? (kept?.type === 'basic' ? kept.password : undefined);
    if (password === undefined) throw badRequest('auth.password is required for Basic authentication', 'invalid_auth');
    if (input.username.includes(':')) throw badRequest('auth.username may not contain ":" (RFC 7617)', 'invalid_auth');
    return { type: 'basic', username: input.username, password };
  }
  const problem = validateEndpointUrl(input.token_url);
  if (problem) throw badRequest(`auth.token_url: ${problem.replace(/^url /, '')}`, 'invalid_auth');
  const blocked = validateEndpointAddress(input.token_url, allowPrivate);
  if (blocked) throw badRequest(`auth.token_url: ${blocked.replace(/^url /, '')}`, 'blocked_address');
  const secret = input.client_secret ?? (kept?.type === 'oauth2_client_credentials' ? kept.client_secret : undefined);
  if (secret === undefined)
    throw badRequest('auth.client_secret is required for OAuth2 client credentials', 'invalid_auth');
  return {
    type: 'oauth2_client_credentials',
    token_url: input.token_url,
    client_id: input.client_id,
    client_secret: secret,
    scope: input.scope ?? null,
    audience: input.audience ?? null,
  };
}

/** What a view shows: never the password or client secret; a member reads the token URL masked. */
export function authView(auth: EndpointAuth | null, admin: boolean): EndpointAuthView {
  if (!auth) return null;
  if (auth.type === 'basic') return { type: 'basic', username: auth.username };
  return {
    type: auth.type,
    token_url: admin ? auth.token_url : maskUrl(auth.token_url),
    client_id: auth.client_id,
    scope: auth.scope,
    audience: auth.audience,
  };
}

/** `Authorization: Basic …` (RFC 7617, UTF-8). */
export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}
