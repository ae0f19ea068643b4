// Opening a console session, whichever way the user proved who they are (issue 22): a
// password (with or without a second factor), a passkey, OpenID Connect or SAML. Every way
// ends here, so a session is made, recorded and answered the same way: the guard_session
// cookie, `Cache-Control: no-store`, and the session's info with its CSRF token.

import type { FastifyReply } from 'fastify';
import type { Role } from '../db/index.ts';
import { ApiError } from '../kernel/errors.ts';
import type { AuthContext } from './context.ts';
import { csrfToken } from './csrf.ts';
import { hashSecret, newId, newSecret } from './secrets.ts';
import { isSecureUrl, sessionCookie } from './session-cookie.ts';
import { newSessionTimes } from './session-policy.ts';

/** How a session was signed in (sessions.method; shown in the user's sessions list). */
export type SignInMethod = 'password' | 'totp' | 'recovery_code' | 'passkey' | 'oidc' | 'saml';

/** The user a sign-in proved. */
export interface SignInAccount {
  id: string;
  email: string;
  role: Role;
  tenant_id: string | null;
}

export interface SessionView {
  user: { id: string; email: string; role: Role; tenant_id: string | null };
  csrf_token: string;
  expires_at: string;
  idle_expires_at: string;
  method: SignInMethod | null;
  /** The tenant requires a second factor and this session has none yet: only setting one up is allowed. */
  mfa_setup_required: boolean;
}

export interface SignedIn {
  info: SessionView;
  /** The session token: the cookie's value, never stored. */
  token: string;
}

/** Ended sessions are kept this long (for the user's own view), then dropped at their next sign-in. */
const ENDED_SESSIONS_KEPT_MS = 30 * 86_400_000;

export function sessionView(
  csrfKey: Buffer,
  user: SignInAccount,
  s: {
    tokenHash: string;
    expiresAt: string;
    idleExpiresAt: string;
    method: SignInMethod | null;
    mfaSetupRequired?: boolean;
  },
): SessionView {
  return {
    user: { id: user.id, email: user.email, role: user.role, tenant_id: user.tenant_id },
    csrf_token: csrfToken(csrfKey, s.tokenHash),
    expires_at: s.expiresAt,
    idle_expires_at: s.idleExpiresAt,
    method: s.method,
    mfa_setup_required: s.mfaSetupRequired ?? false,
  };
}

/**
 * A session must set up a second factor before anything else when the tenant requires one and
 * the session was signed in by a password alone (a password sign-in of a user who holds a
 * factor always asks for it; single sign-on leaves the second factor to the identity provider,
 * and a passkey is one).
 */
export function needsMfaSetup(
  method: SignInMethod | null,
  requireMfa: boolean,
  factors: { totp: boolean; passkeys: number },
): boolean {
  return requireMfa && (method === 'password' || method === null) && !factors.totp && factors.passkeys === 0;
}

/**
 * Opens a session for `account`. The session is written only while the user is still active
 * (not deactivated) and, for a password sign-in, while their password is still the one that
 * was checked (`passwordHash`): a reset, a change or a deprovisioning that committed meanwhile
 * ended every session, and this one must not start after it (401 then).
 */
export async function openSession(
  ctx: AuthContext,
  account: SignInAccount,
  client: { ip: string; userAgent: string },
  method: SignInMethod,
  passwordHash?: string,
  /** The tenant requires a second factor and this session has none (a password sign-in of require_mfa). */
  mfaSetupRequired = false,
): Promise<SignedIn> {
  const now = ctx.now();
  const token = newSecret('sessionToken');
  const tokenHash = hashSecret(token);
  const times = newSessionTimes(now, ctx.lifetimes);
  const session = {
    id: newId('ses'),
    user_id: account.id,
    token_hash: tokenHash,
    created_at: now.toISOString(),
    ...times,
    revoked_at: null,
    ip: client.ip.slice(0, 100),
    user_agent: client.userAgent.slice(0, 300),
    method,
  };
  if (!(await ctx.sessions.insertIfStill(session, passwordHash)))
    // A password sign-in refused here looks like any wrong password (the password it checked is
    // no longer the user's, or the user is gone); other ways in say what happened.
    throw passwordHash !== undefined
      ? new ApiError(401, 'invalid_credentials', 'the email or the password is wrong')
      : new ApiError(401, 'session_refused', 'the account changed while signing in: sign in again');
  await ctx.credentials.signedIn(account.id, now.toISOString());
  await ctx.sessions.deleteEndedOf(account.id, new Date(now.getTime() - ENDED_SESSIONS_KEPT_MS).toISOString());
  const info = sessionView(ctx.csrfKey, account, {
    tokenHash,
    expiresAt: times.expires_at,
    idleExpiresAt: times.idle_expires_at,
    method,
    mfaSetupRequired,
  });
  return { info, token };
}

/** Sets the session cookie on the reply; the caller sends the body (JSON, or a redirect). */
export function setSessionCookie(reply: FastifyReply, publicUrl: string, token: string): FastifyReply {
  return reply.header('set-cookie', sessionCookie(token, isSecureUrl(publicUrl))).header('cache-control', 'no-store');
}
