// Sign-in, sign-out, the current session, and the use of a one-time set-password link.

import { ApiError, notFound, unauthorized } from '../../kernel/errors.ts';
import type { AuthContext } from '../context.ts';
import type { UserPrincipal } from '../principal.ts';
import { checkPassword, hashPassword, hashSecret } from '../secrets.ts';
import { openSession, type SessionView, type SignedIn, sessionView } from '../sign-in.ts';

/** Unknown email and wrong password get the same answer (and, through checkPassword, the same time). */
const invalidCredentials = () => new ApiError(401, 'invalid_credentials', 'the email or the password is wrong');

/** The id that stands for the vendor's staff (no tenant) when an email signs in to several. */
export const STAFF_CHOICE = 'staff';

export interface TenantChoice {
  id: string;
  name: string;
}

/** The email and password are right for accounts in more than one tenant: the caller names one. */
export class TenantRequired extends ApiError {
  readonly tenants: TenantChoice[];
  constructor(tenants: TenantChoice[]) {
    super(
      409,
      'tenant_required',
      'this email and password sign in to more than one tenant: send tenant_id, one of the tenants listed',
    );
    this.tenants = tenants;
  }
}

export class TooManyAttempts extends ApiError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(429, 'too_many_attempts', `too many failed sign-ins: try again in ${retryAfterSeconds} s`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Emails are compared without case or surrounding spaces. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function login(
  ctx: AuthContext,
  body: { email: string; password: string; tenant_id?: string },
  client: { ip: string; userAgent: string },
): Promise<SignedIn> {
  const email = normaliseEmail(body.email);
  const retryAfter = await ctx.limiter.retryAfterSeconds(email, client.ip, ctx.now());
  if (retryAfter > 0) throw new TooManyAttempts(retryAfter);
  // An email may have an account in several tenants: the password says which (each account of
  // the email is checked; with none, one check of a dummy hash, as with one).
  const accounts = (await ctx.credentials.accountsByEmail(email)).filter(
    (a) => body.tenant_id === undefined || (a.tenant_id ?? STAFF_CHOICE) === body.tenant_id,
  );
  if (accounts.length === 0) await checkPassword(body.password, undefined);
  const matched = [];
  for (const a of accounts) if (await checkPassword(body.password, a.password_hash)) matched.push(a);
  const [account] = matched;
  if (!account) {
    await ctx.limiter.failed(email, client.ip, ctx.now());
    throw invalidCredentials();
  }
  if (matched.length > 1)
    throw new TenantRequired(
      matched.map((a) => ({ id: a.tenant_id ?? STAFF_CHOICE, name: a.tenant_name ?? 'Guard support staff' })),
    );
  const signedIn = await openSession(
    ctx,
    account,
    client,
    'password',
    // Not a failed guess when it is refused (the password was right when checked).
    account.password_hash,
  );
  await ctx.limiter.succeeded(email, client.ip);
  return signedIn;
}

/** The session of a cookie-authenticated request; 401 for a bearer token (it has none). */
export function currentSession(ctx: AuthContext, user: UserPrincipal | undefined): SessionView {
  if (!user?.session) throw unauthorized('no console session: sign in');
  return sessionView(
    ctx.csrfKey,
    { id: user.userId, email: user.email, role: user.role, tenant_id: user.tenantId },
    user.session,
  );
}

export async function logout(ctx: AuthContext, user: UserPrincipal | undefined): Promise<void> {
  if (user?.session) await ctx.sessions.revoke(user.userId, user.session.id, ctx.now().toISOString());
}

const linkGone = () =>
  new ApiError(410, 'link_expired', 'this set-password link was used or has expired: ask an admin for a new one');

export async function checkPasswordLink(ctx: AuthContext, token: string) {
  const link = await ctx.credentials.linkByTokenHash(hashSecret(token));
  if (!link) throw notFound('set-password link');
  if (link.used_at !== null || Date.parse(link.expires_at) <= ctx.now().getTime()) throw linkGone();
  return { email: link.email, expires_at: link.expires_at };
}

export async function setPasswordWithLink(ctx: AuthContext, body: { token: string; password: string }): Promise<void> {
  const tokenHash = hashSecret(body.token);
  const link = await ctx.credentials.linkByTokenHash(tokenHash);
  if (!link) throw notFound('set-password link');
  const passwordHash = await hashPassword(body.password);
  if (!(await ctx.credentials.useLink(tokenHash, passwordHash, ctx.now().toISOString()))) throw linkGone();
}
