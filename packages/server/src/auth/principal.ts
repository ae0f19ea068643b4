// Who is calling, resolved once per request (docs/console.md#authentication):
//   - `Authorization: Bearer <secret>`: an agent key (gak_) or a user API token (gut_). A
//     request that carries Authorization is judged by it alone; its cookies are ignored.
//   - otherwise the console's session cookie (guard_session), and then every write
//     (not GET/HEAD/OPTIONS) must pass the CSRF checks (csrf.ts) or is refused with 403.
// Routes then check the principal with requireAgent / requireUser. Every query a route makes
// is scoped by the principal's tenant.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db, Role } from '../db/index.ts';
import { ApiError, forbidden, unauthorized } from '../kernel/errors.ts';
import { checkCsrf, csrfToken } from './csrf.ts';
import { FlowStartLimiter } from './flow-start-limit.ts';
import { checkScope, parseScopes, type ScopeArea, type TokenScope } from './scopes.ts';
import { hashSecret, secretKind } from './secrets.ts';
import { clearedSessionCookie, isSecureUrl, readSessionCookie } from './session-cookie.ts';
import { isLive, touch } from './session-policy.ts';
import { SessionsRepository } from './sessions-repository.ts';
import type { SessionSettings } from './settings.ts';
import { needsMfaSetup, type SignInMethod } from './sign-in.ts';

/** The session a cookie-authenticated user principal came through. */
export interface SessionRef {
  id: string;
  tokenHash: string;
  expiresAt: string;
  idleExpiresAt: string;
  /** How the session was signed in (null: before migration 0018). */
  method: SignInMethod | null;
  /** The tenant requires a second factor this session does not have (sign-in.ts needsMfaSetup). */
  mfaSetupRequired: boolean;
}

export type Principal =
  | { kind: 'agent'; agentId: string; tenantId: string; hostname: string; environment: string }
  | {
      kind: 'user';
      userId: string;
      tenantId: string | null;
      role: Role;
      email: string;
      /** Set when the request was authenticated by the session cookie, not a bearer token. */
      session?: SessionRef;
      /** The API token's id, when the request was authenticated by one. */
      tokenId?: string;
      /** The API token's scopes (scopes.ts); undefined: full access (a session, or a token without scopes). */
      scopes?: readonly TokenScope[];
    };

export type AgentPrincipal = Extract<Principal, { kind: 'agent' }>;
export type UserPrincipal = Extract<Principal, { kind: 'user' }>;
/** An admin or member: people of one tenant (only support staff belong to none). */
export type TenantUser = UserPrincipal & { tenantId: string };

const BEARER = /^Bearer ([A-Za-z0-9_-]{10,200})$/;

/** A token's last use is written at most this often. */
export const TOKEN_USE_WRITE_INTERVAL_MS = 60_000;

/** The live agent of an API key hash, marked seen at `at` (the agents capability answers it). */
export type AgentKeyLookup = (keyHash: string, at: Date) => Promise<AgentPrincipal | undefined>;

export async function resolvePrincipal(
  deps: { db: Db; now: () => Date; agentKeys: AgentKeyLookup },
  authorization: string | undefined,
): Promise<Principal | undefined> {
  const { db, now, agentKeys } = deps;
  if (!authorization) return undefined;
  const m = BEARER.exec(authorization);
  if (!m) throw unauthorized('the Authorization header must be "Bearer <token>"');
  const secret = m[1];
  const hash = hashSecret(secret);
  switch (secretKind(secret)) {
    case 'agentKey':
      // The agents capability reads the key's agent (and marks it seen): agents/agent-keys.ts.
      return agentKeys(hash, now());
    case 'userToken': {
      const user = await db
        .selectFrom('api_tokens')
        .innerJoin('users', 'users.id', 'api_tokens.user_id')
        .select([
          'users.id',
          'users.tenant_id',
          'users.role',
          'users.email',
          'api_tokens.id as token_id',
          'api_tokens.scopes',
          'api_tokens.expires_at',
          'api_tokens.last_used_at',
        ])
        .where('api_tokens.token_hash', '=', hash)
        .where('api_tokens.revoked_at', 'is', null)
        .where('users.deactivated_at', 'is', null)
        .executeTakeFirst();
      if (!user) return undefined;
      const at = now();
      if (user.expires_at && Date.parse(user.expires_at) <= at.getTime())
        throw new ApiError(401, 'token_expired', `this API token expired at ${user.expires_at}`);
      // Its use is written at most once a minute, so a busy token costs no write per request.
      // Bookkeeping only: a write refused (a full disk: 507 for writes) must not fail a read.
      if (!user.last_used_at || at.getTime() - Date.parse(user.last_used_at) >= TOKEN_USE_WRITE_INTERVAL_MS)
        await db
          .updateTable('api_tokens')
          .set({ last_used_at: at.toISOString() })
          .where('id', '=', user.token_id)
          .execute()
          .catch(() => undefined);
      return {
        kind: 'user',
        userId: user.id,
        tenantId: user.tenant_id,
        role: user.role,
        email: user.email,
        tokenId: user.token_id,
        scopes: parseScopes(user.scopes),
      };
    }
    default:
      return undefined;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface AuthDeps {
  db: Db;
  config: { sessions: SessionSettings };
  now: () => Date;
  publicUrl: () => string;
  /** Key of the CSRF tokens (csrf.ts). */
  csrfKey: Buffer;
  /** Who an agent key belongs to (the agents capability: agents/agent-keys.ts). */
  agentKeys: AgentKeyLookup;
}

/** The console's origin (scheme, host, port of the public URL), which cookie-authenticated writes must come from. */
export function publicOrigin(publicUrl: string): string {
  return new URL(publicUrl).origin;
}

export { isSecureUrl };

/** The session of a cookie, when it is live; its use is written at most once a minute. */
async function resolveSession(
  deps: AuthDeps,
  sessions: SessionsRepository,
  token: string,
): Promise<UserPrincipal | undefined> {
  const tokenHash = hashSecret(token);
  const found = await sessions.findByTokenHash(tokenHash);
  const now = deps.now();
  if (!found || !isLive(found.session, now)) return undefined;
  const { session, user, mfa } = found;
  const method = (session.method ?? null) as SignInMethod | null;
  const used = touch(session, now, deps.config.sessions);
  if (used) await sessions.touch(session.id, used);
  return {
    kind: 'user',
    userId: user.id,
    tenantId: user.tenant_id,
    role: user.role,
    email: user.email,
    session: {
      id: session.id,
      tokenHash,
      expiresAt: session.expires_at,
      idleExpiresAt: used?.idle_expires_at ?? session.idle_expires_at,
      method,
      mfaSetupRequired: needsMfaSetup(method, mfa.required, mfa),
    },
  };
}

/**
 * Every request carries req.principal, resolved once its input passed validation. Routes
 * marked `config: { cookieless: true }` resolve no cookie, and those marked `startsFlow` are
 * limited per address (FastifyContextConfig below).
 */
export function authenticateRequests(app: FastifyInstance, deps: AuthDeps): void {
  const sessions = new SessionsRepository(deps.db);
  const flowStarts = new FlowStartLimiter();
  const routes: DeclaredRoute[] = [];
  declared.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      routes.push({ method, url: route.url, scope: (route.config as { scope?: ScopeArea } | undefined)?.scope });
  });
  // CSRF first, before the body is even parsed: a forged write (a cross-site form post among
  // them) is refused with 403 whatever it carries. The token derives from the cookie alone,
  // so no query is needed; whether the session is live is judged below.
  app.addHook('onRequest', async (req) => {
    req.principal = undefined;
    if (SAFE_METHODS.has(req.method) || req.headers.authorization !== undefined) return;
    if (req.routeOptions.config?.cookieless) return;
    const token = readSessionCookie(req.headers.cookie);
    if (token === undefined) return;
    checkCsrf(req.headers, publicOrigin(deps.publicUrl()), csrfToken(deps.csrfKey, hashSecret(token)));
  });
  // Before anything else is done for it: a start over the limit writes nothing.
  app.addHook('onRequest', async (req, reply) => {
    if (!req.routeOptions.config?.startsFlow) return;
    const waitSeconds = flowStarts.take(req.ip, deps.now().getTime());
    if (waitSeconds === undefined) return;
    reply.header('retry-after', String(waitSeconds));
    throw new ApiError(
      429,
      'too_many_attempts',
      `too many sign-ins started from this address: try again in ${waitSeconds} s`,
    );
  });
  app.addHook('preHandler', async (req, reply) => {
    const authorization = req.headers.authorization;
    if (authorization !== undefined) {
      const principal = await resolvePrincipal(deps, authorization);
      // A scoped token calls only the routes of its scopes (scopes.ts): deny by default.
      // An unknown path stays a 404 (no route, no area to judge).
      if (principal?.kind === 'user' && !req.is404)
        checkScope(principal.scopes, req.routeOptions.config?.scope, req.method);
      req.principal = principal;
      return;
    }
    if (req.routeOptions.config?.cookieless) return;
    const token = readSessionCookie(req.headers.cookie);
    if (token === undefined) return;
    const principal = await resolveSession(deps, sessions, token);
    if (!principal?.session) {
      endSessionCookie(reply, deps.publicUrl());
      return;
    }
    req.principal = principal;
    if (principal.session.mfaSetupRequired && !MFA_SETUP_ROUTES.test(req.routeOptions.url ?? ''))
      throw new ApiError(
        403,
        'mfa_setup_required',
        'your organisation requires two-step sign-in: set up an authenticator app or a passkey in Settings > Account first',
      );
  });
}

/** What a session that must set up a second factor may still do: set one up, see itself, sign out. */
const MFA_SETUP_ROUTES = /^\/v1\/(me\/mfa|me\/passkeys|auth\/session$|auth\/logout$)/;

/** A route as registered, with the area it declared (scopes.ts). */
export interface DeclaredRoute {
  method: string;
  url: string;
  scope: ScopeArea | undefined;
}

const declared = new WeakMap<FastifyInstance, DeclaredRoute[]>();

/** Every route registered after authenticateRequests, with its declared area: a test holds each /v1 route to one. */
export function declaredRoutes(app: FastifyInstance): readonly DeclaredRoute[] {
  return declared.get(app) ?? [];
}

/** Tells the browser to drop its session cookie (expired, revoked, signed out). */
export function endSessionCookie(reply: FastifyReply, publicUrl: string): void {
  reply.header('set-cookie', clearedSessionCookie(isSecureUrl(publicUrl)));
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | undefined;
  }
  interface FastifyContextConfig {
    /**
     * No session cookie is resolved: routes that sign in without a session (login,
     * set-password), where a stale cookie must not make them CSRF-checked, and the console's
     * static files, which need no principal.
     */
    cookieless?: boolean;
    /**
     * A sign-in anyone may start, which writes its flow before anyone is known: limited per
     * client address (flow-start-limit.ts), 429 too_many_attempts over the limit.
     */
    startsFlow?: boolean;
    /**
     * The area of the API the route belongs to (scopes.ts): a scoped API token needs its read
     * (GET, HEAD) or write (other methods) scope. Without one, only full-access credentials pass.
     */
    scope?: ScopeArea;
  }
}

export function requireAgent(req: FastifyRequest): AgentPrincipal {
  const p = req.principal;
  if (!p) throw unauthorized();
  if (p.kind !== 'agent') throw forbidden('this endpoint takes an agent API key');
  return p;
}

export function requireUser(req: FastifyRequest, roles: readonly Role[]): UserPrincipal {
  const p = req.principal;
  if (!p) throw unauthorized();
  if (p.kind !== 'user') throw forbidden('this endpoint takes a user API token or a console session');
  if (!roles.includes(p.role)) throw forbidden(`this endpoint needs the ${roles.join(' or ')} role`);
  return p;
}

/** The user of the request, if a user signed it (sign-out and the session view answer without one too). */
export function signedInUser(req: FastifyRequest): UserPrincipal | undefined {
  return req.principal?.kind === 'user' ? req.principal : undefined;
}

/** requireUser for the routes of a tenant's own people, whose queries are scoped by its id. */
export function requireTenantUser(req: FastifyRequest, roles: readonly Exclude<Role, 'support'>[]): TenantUser {
  const user = requireUser(req, roles);
  if (user.tenantId === null) throw forbidden('this endpoint needs a user of a tenant');
  return { ...user, tenantId: user.tenantId };
}
