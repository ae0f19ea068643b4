// The tenant's OpenID Connect connection (save, show, remove) and its sign-in round trip:
// start (state, nonce and PKCE verifier kept server-side as an `oidc` flow, 10 min, then the
// provider's authorization endpoint) and callback (the flow taken once by its state, the code
// exchanged, the ID token verified, the person mapped by ssoMember, a session opened).
// The flow's PKCE verifier and nonce are kept as they are in the flow's row, not sealed: the
// row lives ten minutes, is used once, and a code redeemed with the verifier still needs the
// client secret, which is sealed.

import type { FastifyBaseLogger } from 'fastify';
import type { AuditActor } from '../../audit/index.ts';
import { type AuthContext, newSsoBinding, openSession, ssoBindingMatches } from '../../auth/index.ts';
import type { Db } from '../../db/index.ts';
import { ApiError, badRequest } from '../../kernel/errors.ts';
import { open, seal } from '../../kernel/secret-box.ts';
import type { SsoConnection, SsoConnections } from '../connections.ts';
import { ssoMember } from '../members.ts';
import { emailDomain, identityOf } from './claims.ts';
import {
  authorizationUrl,
  exchangeCode,
  issuerProblem,
  newSignInRequest,
  type ProviderConfigurations,
  ProviderUnavailable,
  type SignInRequest,
  scopesFor,
} from './provider.ts';

/** What the connection keeps besides its secret, domains and admin group. */
export interface OidcConfig {
  issuer: string;
  client_id: string;
  /** The scopes sign-in asked for when it was saved (shown to the admin). */
  scopes?: string;
}

/** What the sign-in round trip keeps between start and callback (the flow's data). */
interface OidcFlow extends SignInRequest {
  issuer: string;
  client_id: string;
  /** SHA-256 of the browser binding (the guard_sso cookie set at the start). */
  binding_hash: string;
}

const FLOW_TTL_MS = 10 * 60_000;

export interface OidcContext {
  db: Db;
  auth: AuthContext;
  connections: SsoConnections;
  /** Seals client secrets (masterKey.derive('sso')); the tenant id is the associated data. */
  secretKey: Buffer;
  providers: ProviderConfigurations;
}

export function redirectUri(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/v1/auth/oidc/callback`;
}

export function connectionView(ctx: OidcContext, c: SsoConnection<OidcConfig> | undefined) {
  return {
    configured: c !== undefined,
    redirect_uri: redirectUri(ctx.auth.publicUrl()),
    issuer: c?.config.issuer ?? null,
    client_id: c?.config.client_id ?? null,
    has_client_secret: Boolean(c?.secretSealed),
    email_domains: c?.emailDomains ?? [],
    admin_group: c?.adminGroup ?? null,
    scopes: c?.config.scopes ?? null,
    updated_at: c?.updatedAt ?? null,
  };
}

export async function saveConnection(
  ctx: OidcContext,
  tenantId: string,
  body: {
    issuer: string;
    client_id: string;
    client_secret?: string;
    email_domains: string[];
    admin_group?: string | null;
  },
  actor: AuditActor,
): Promise<SsoConnection<OidcConfig>> {
  const issuer = body.issuer.trim();
  const problem = issuerProblem(issuer);
  if (problem) throw badRequest(problem, 'invalid_issuer');
  const existing = await ctx.connections.find<OidcConfig>(tenantId, 'oidc');
  // The stored secret is only ever sent to the issuer it was given for: a new issuer needs it again.
  const kept = existing?.secretSealed && existing.config.issuer === issuer ? existing.secretSealed : undefined;
  const secret = body.client_secret ?? (kept ? open(ctx.secretKey, kept, tenantId) : undefined);
  if (secret === undefined)
    throw badRequest(
      existing
        ? 'client_secret is required when the issuer changes (the stored one is sent to no other issuer)'
        : 'client_secret is required for a new connection',
      'client_secret_required',
    );
  let scopes: string;
  try {
    scopes = scopesFor(await ctx.providers.discover({ issuer, clientId: body.client_id, clientSecret: secret }));
  } catch (error) {
    if (!(error instanceof ProviderUnavailable)) throw error;
    throw badRequest(
      `could not read the OpenID Connect discovery document of ${issuer} (${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration): ${error.message}`,
      'invalid_issuer',
    );
  }
  return ctx.connections.save<OidcConfig>(
    tenantId,
    'oidc',
    {
      config: { issuer, client_id: body.client_id, scopes },
      secretSealed: body.client_secret === undefined ? undefined : seal(ctx.secretKey, body.client_secret, tenantId),
      emailDomains: body.email_domains,
      adminGroup: body.admin_group ?? null,
    },
    actor,
  );
}

/**
 * A refused single sign-on: the browser goes back to the console's sign-in page with `code`
 * (sso_error), the reason goes to the log only.
 */
export class SsoRefused extends Error {
  readonly code: string;
  constructor(code: string, reason: string, options?: ErrorOptions) {
    super(reason, options);
    this.code = code;
  }
}

/** The provider's authorization URL for the person of `email`; the round trip's state is kept as a flow. */
/**
 * Where to send the browser, and the binding to set as its guard_sso cookie: the callback
 * is taken only from the browser that holds it.
 */
export async function startSignIn(ctx: OidcContext, email: string): Promise<{ to: string; binding: string }> {
  const domain = emailDomain(email.trim());
  if (!domain) throw new SsoRefused('invalid_email', 'the email has no domain');
  const route = await ctx.connections.route(domain);
  if (route?.protocol !== 'oidc') throw new SsoRefused('unknown_domain', `no OIDC connection for ${domain}`);
  const connection = await ctx.connections.find<OidcConfig>(route.tenantId, 'oidc');
  if (!connection?.secretSealed) throw new SsoRefused('unknown_domain', `no OIDC connection for ${domain}`);
  const config = await configOf(ctx, connection);
  const request = newSignInRequest();
  const { binding, hash } = newSsoBinding();
  await ctx.auth.flows.start<OidcFlow>('oidc', {
    tenantId: connection.tenantId,
    key: request.state,
    data: {
      ...request,
      issuer: connection.config.issuer,
      client_id: connection.config.client_id,
      binding_hash: hash,
    },
    ttlMs: FLOW_TTL_MS,
  });
  const to = (await authorizationUrl(config, request, redirectUri(ctx.auth.publicUrl()), email.trim())).href;
  return { to, binding };
}

async function configOf(ctx: OidcContext, connection: SsoConnection<OidcConfig>) {
  try {
    return await ctx.providers.discover(
      {
        issuer: connection.config.issuer,
        clientId: connection.config.client_id,
        clientSecret: open(ctx.secretKey, connection.secretSealed ?? '', connection.tenantId),
      },
      `${connection.tenantId}\0${connection.updatedAt}\0${connection.secretSealed}`,
    );
  } catch (error) {
    if (error instanceof ProviderUnavailable)
      throw new SsoRefused('provider_unavailable', `discovery failed: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * The callback: the flow of `state` is taken (once), the provider's answer checked, and the
 * person it vouches for signed in. Returns the new session's token.
 */
export async function finishSignIn(
  ctx: OidcContext,
  query: { state?: string; error?: string; error_description?: string },
  /** The request's Cookie header: its guard_sso must be the start's. */
  cookies: string | undefined,
  callbackUrl: URL,
  client: { ip: string; userAgent: string },
  log: FastifyBaseLogger,
): Promise<string> {
  if (!query.state) throw new SsoRefused('invalid_state', 'the callback carries no state');
  const flow = await ctx.auth.flows.take<OidcFlow>('oidc', query.state);
  if (!flow?.tenantId)
    throw new SsoRefused('invalid_state', 'no live sign-in of this state (expired, used, or never started)');
  const tenantId = flow.tenantId;
  if (query.error)
    throw new SsoRefused(
      query.error === 'access_denied' ? 'access_denied' : 'provider_error',
      `the provider answered ${query.error.slice(0, 100)}: ${(query.error_description ?? '').slice(0, 300)}`,
    );
  // The state is this browser's only when it brings back the binding set at the start.
  if (!ssoBindingMatches(cookies, flow.data.binding_hash))
    throw new SsoRefused(
      'invalid_state',
      'the sign-in was not started in this browser (no or another guard_sso cookie)',
    );
  const connection = await ctx.connections.find<OidcConfig>(tenantId, 'oidc');
  if (
    !connection?.secretSealed ||
    connection.config.issuer !== flow.data.issuer ||
    connection.config.client_id !== flow.data.client_id
  )
    throw new SsoRefused(
      'connection_changed',
      'the tenant’s OIDC connection was changed or removed during the sign-in',
    );
  const config = await configOf(ctx, connection);
  let claims: Record<string, unknown>;
  try {
    claims = await exchangeCode(config, callbackUrl, flow.data);
  } catch (error) {
    throw new SsoRefused('invalid_response', `code exchange or ID token check failed: ${describeSafely(error)}`, {
      cause: error,
    });
  }
  const identity = identityOf(claims, connection.emailDomains);
  if ('refused' in identity)
    throw new SsoRefused(identity.refused, `the ID token's email was refused (${identity.refused})`);
  let member: Awaited<ReturnType<typeof ssoMember>>;
  try {
    member = await ssoMember(
      { db: ctx.db, now: ctx.auth.now },
      { tenantId, protocol: 'oidc', adminGroup: connection.adminGroup },
      identity,
    );
  } catch (error) {
    if (error instanceof ApiError && error.code === 'user_deactivated')
      throw new SsoRefused('user_deactivated', 'the user is deactivated');
    throw error;
  }
  try {
    const { token } = await openSession(ctx.auth, member, client, 'oidc');
    log.info({ tenantId, userId: member.id, created: member.created, role: member.role }, 'OIDC sign-in');
    return token;
  } catch (error) {
    if (error instanceof ApiError) throw new SsoRefused('session_refused', error.message);
    throw error;
  }
}

function describeSafely(error: unknown): string {
  const e = error as { message?: unknown; error?: unknown; code?: unknown };
  const parts = [e.code, e.error, e.message].filter((p) => typeof p === 'string');
  return parts.join(': ').slice(0, 300);
}
