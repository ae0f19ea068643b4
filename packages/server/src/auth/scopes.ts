// Scopes of personal API tokens (docs/identity.md#api-tokens). A token holds either no scopes
// (full access: everything its user's role may do) or a non-empty list from the vocabulary
// below. Enforcement is central and deny-by-default: every route declares the area it belongs
// to in its config (`config: { scope: 'webhooks' }`), the HTTP method says whether it reads
// (GET, HEAD) or writes, and a scoped token may call a route only when one of its scopes
// grants that area and access. A route that declares no area (sign-in, the agents' own
// routes) and the user's own account (`account`: no scope grants its writes, so a scoped token
// can never create tokens or change a password or second factor) take full-access credentials
// only. The role checks of each route still apply: a scope narrows a role, never widens it.

import { ApiError } from '../kernel/errors.ts';

/**
 * The areas of the API a route may declare; `account` is the user's own /v1/me/*; `identity` is
 * who may sign in to the tenant and how (its identity providers, SCIM tokens, a user's second
 * factors): like the account, no scope grants its writes — a leaked scoped token must never
 * be able to point the tenant's sign-in at another identity provider.
 */
export const SCOPE_AREAS = [
  'webhooks',
  'signals',
  'servers',
  'bundles',
  'users',
  'audit',
  'settings',
  'account',
  'identity',
] as const;
export type ScopeArea = (typeof SCOPE_AREAS)[number];

/**
 * What a token may be given: `read` (every read its role may do), and per area `:read` or
 * `:write` (write implies read). The audit log is read-only; the account has no scope of its own.
 */
export const TOKEN_SCOPES = [
  'read',
  'webhooks:read',
  'webhooks:write',
  'signals:read',
  'signals:write',
  'servers:read',
  'servers:write',
  'bundles:read',
  'bundles:write',
  'users:read',
  'users:write',
  'audit:read',
  'settings:read',
  'settings:write',
] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

const KNOWN = new Set<string>(TOKEN_SCOPES);

/** The scopes stored with a token (api_tokens.scopes, JSON); undefined: full access. Unknown entries grant nothing. */
export function parseScopes(stored: string | null | undefined): TokenScope[] | undefined {
  if (stored === null || stored === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return [];
  }
  return Array.isArray(parsed) ? parsed.filter((s): s is TokenScope => typeof s === 'string' && KNOWN.has(s)) : [];
}

const READS = new Set(['GET', 'HEAD']);

/** The scope a request needs: the area's read or write by its method; undefined when the route declares no area. */
export function neededScope(area: ScopeArea | undefined, method: string): string | undefined {
  if (area === undefined) return undefined;
  return `${area}:${READS.has(method.toUpperCase()) ? 'read' : 'write'}`;
}

/** Whether `scopes` grant `needed` (`read` grants every area's read; an area's write grants its read). */
export function grants(scopes: readonly TokenScope[], needed: string): boolean {
  const [area, access] = needed.split(':');
  const held = new Set<string>(scopes);
  if (held.has(needed)) return true;
  if (access === 'read') return held.has('read') || held.has(`${area}:write`);
  return false;
}

/** 403 insufficient_scope unless a token with `scopes` (undefined: full access) may call a route of `area` with `method`. */
export function checkScope(
  scopes: readonly TokenScope[] | undefined,
  area: ScopeArea | undefined,
  method: string,
): void {
  if (scopes === undefined) return;
  const needed = neededScope(area, method);
  if (needed === undefined)
    throw new ApiError(403, 'insufficient_scope', 'this endpoint needs a full-access token: it belongs to no scope');
  if (area === 'account' && needed === 'account:write')
    throw new ApiError(
      403,
      'insufficient_scope',
      'this endpoint needs a full-access token (account:write): a scoped token cannot change your account',
    );
  if (!grants(scopes, needed))
    throw new ApiError(403, 'insufficient_scope', `this endpoint needs the ${needed} scope, which this token lacks`);
}
