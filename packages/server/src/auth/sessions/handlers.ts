// Sign-in, sign-out, the current session, and the use of a one-time set-password link.

import { ApiError, notFound, unauthorized } from '../../kernel/errors.ts';
import { open, seal } from '../../kernel/secret-box.ts';
import type { AuthContext } from '../context.ts';
import type { Flow } from '../flows.ts';
import type { UserPrincipal } from '../principal.ts';
import { checkPassword, hashPassword, hashSecret } from '../secrets.ts';
import {
  needsMfaSetup,
  openSession,
  type SessionView,
  type SignedIn,
  type SignInMethod,
  sessionView,
} from '../sign-in.ts';
import { normaliseRecoveryCode, totpStep } from '../totp.ts';

/** A password sign-in's second step lives this long, and takes this many wrong answers. */
const MFA_STEP_MS = 5 * 60_000;
const MFA_STEP_ATTEMPTS = 5;

export type SecondFactorMethod = 'totp' | 'recovery_code' | 'passkey';

/** What the second step keeps of the first (auth_flows.data). */
export interface MfaStepData {
  /** The password hash checked: the session opens only while it is still the user's. */
  password_hash: string;
  /** The email signed in with: the login limits are counted on it. */
  email: string;
}

/** 200 from POST /v1/auth/login when the user holds a second factor: no session yet. */
export interface MfaRequired {
  mfa_required: true;
  mfa_token: string;
  methods: SecondFactorMethod[];
  expires_at: string;
}

const mfaExpired = (message = 'this sign-in expired or was completed: sign in again') =>
  new ApiError(401, 'mfa_expired', message);

const ssoRequired = () =>
  new ApiError(
    403,
    'sso_required',
    'your organisation signs in through single sign-on: use "Sign in with SSO" with your work email',
  );

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
): Promise<SignedIn | MfaRequired> {
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
  const [factors, policy] = await Promise.all([ctx.mfa.factors(account.id), ctx.mfa.policy(account.tenant_id)]);
  const totp = factors.totpSealed !== null;
  // sso_only: the tenant's people sign in through its identity provider; a password works only
  // for its admins who hold TOTP (break-glass, for when the provider is down or misconfigured).
  if (policy.ssoOnly && !(account.role === 'admin' && totp)) throw ssoRequired();
  if (totp || factors.passkeys > 0) {
    const methods: SecondFactorMethod[] = [];
    if (totp) methods.push('totp', 'recovery_code');
    if (factors.passkeys > 0) methods.push('passkey');
    const expiresAt = new Date(ctx.now().getTime() + MFA_STEP_MS).toISOString();
    const mfaToken = await ctx.flows.start<MfaStepData>('mfa', {
      userId: account.id,
      tenantId: account.tenant_id,
      ttlMs: MFA_STEP_MS,
      data: { password_hash: account.password_hash, email },
    });
    return { mfa_required: true, mfa_token: mfaToken, methods, expires_at: expiresAt };
  }
  const signedIn = await openSession(
    ctx,
    account,
    client,
    'password',
    // Not a failed guess when it is refused (the password was right when checked).
    account.password_hash,
    // No factor held (else the second step was asked): the tenant's policy alone decides.
    needsMfaSetup('password', policy.requireMfa, { totp: false, passkeys: 0 }),
  );
  await ctx.limiter.succeeded(email, client.ip);
  return signedIn;
}

/**
 * The second step of a password sign-in: a TOTP code (accepted once: its step must be later
 * than the last one accepted) or an unused recovery code (used up). Wrong answers count toward
 * the login limits and the step's own limit (5, then the password is asked again). The step
 * is found in the database, so any replica can answer it; it is taken (used once) only after
 * the factor was accepted.
 */
export async function completeMfa(
  ctx: AuthContext,
  body: { mfa_token: string; code?: string; recovery_code?: string },
  client: { ip: string; userAgent: string },
): Promise<SignedIn> {
  const flow = await ctx.flows.find<MfaStepData>('mfa', body.mfa_token);
  if (!flow?.userId) throw mfaExpired();
  const { email } = flow.data;
  const userId = flow.userId;
  const retryAfter = await ctx.limiter.retryAfterSeconds(email, client.ip, ctx.now());
  if (retryAfter > 0) throw new TooManyAttempts(retryAfter);
  let method: SignInMethod;
  let accepted = false;
  if (body.code !== undefined && body.recovery_code === undefined) {
    method = 'totp';
    const { totpSealed } = await ctx.mfa.factors(userId);
    if (totpSealed !== null) {
      const step = totpStep(openTotpSecret(ctx, userId, totpSealed), body.code, ctx.now());
      accepted = step !== undefined && (await ctx.mfa.acceptStep(userId, step));
    }
  } else if (body.recovery_code !== undefined && body.code === undefined) {
    method = 'recovery_code';
    const hash = hashSecret(normaliseRecoveryCode(body.recovery_code));
    accepted = await ctx.mfa.useRecoveryCode(userId, hash, ctx.now().toISOString());
  } else throw new ApiError(400, 'invalid_request', 'send either code or recovery_code with the mfa_token');
  if (!accepted) {
    await ctx.limiter.failed(email, client.ip, ctx.now());
    if (!(await ctx.flows.failed('mfa', body.mfa_token, MFA_STEP_ATTEMPTS)))
      throw mfaExpired('too many wrong codes: sign in again');
    throw method === 'totp'
      ? new ApiError(401, 'invalid_code', 'the authentication code is wrong or was already used')
      : new ApiError(401, 'invalid_code', 'the recovery code is wrong or was already used');
  }
  return finishMfa(ctx, body.mfa_token, flow, method, client);
}

/**
 * Ends the second step once its factor was accepted (a TOTP or recovery code here; a passkey in
 * passkeys/): the step is taken, so a second answer to the same token finds nothing, and the
 * session opens as the password sign-in would have.
 */
export async function finishMfa(
  ctx: AuthContext,
  mfaToken: string,
  flow: Flow<MfaStepData>,
  method: SignInMethod,
  client: { ip: string; userAgent: string },
): Promise<SignedIn> {
  if (!flow.userId || !(await ctx.flows.take('mfa', mfaToken))) throw mfaExpired();
  const account = await ctx.credentials.accountById(flow.userId);
  if (!account) throw mfaExpired();
  const signedIn = await openSession(ctx, account, client, method, flow.data.password_hash);
  await ctx.limiter.succeeded(flow.data.email, client.ip);
  return signedIn;
}

export function openTotpSecret(ctx: AuthContext, userId: string, sealed: string): string {
  return open(ctx.masterKey.derive('totp'), sealed, userId);
}

export function sealTotpSecret(ctx: AuthContext, userId: string, secret: string): string {
  return seal(ctx.masterKey.derive('totp'), secret, userId);
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
