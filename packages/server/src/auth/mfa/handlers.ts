// The signed-in user's own second factors: TOTP set up with a QR code (an otpauth:// URL) and
// confirmed by a first code, ten single-use recovery codes, turning TOTP off, new recovery codes.
// Codes typed here are checked like the sign-in's: a TOTP code is accepted once, a recovery
// code is used up, and wrong ones count toward the login limits of the account.

import { ApiError } from '../../kernel/errors.ts';
import type { AuthContext } from '../context.ts';
import type { UserPrincipal } from '../principal.ts';
import { hashSecret } from '../secrets.ts';
import { openTotpSecret, sealTotpSecret, TooManyAttempts } from '../sessions/handlers.ts';
import { newRecoveryCodes, newTotpSecret, normaliseRecoveryCode, otpauthUrl, totpStep } from '../totp.ts';

const wrongCode = () => new ApiError(400, 'invalid_code', 'the code is wrong or was already used');

export async function mfaStatus(ctx: AuthContext, user: UserPrincipal) {
  const [factors, policy] = await Promise.all([ctx.mfa.factors(user.userId), ctx.mfa.policy(user.tenantId)]);
  return {
    totp_enabled: factors.totpSealed !== null,
    totp_enabled_at: factors.totpEnabledAt,
    recovery_codes_left: factors.recoveryCodesLeft,
    passkeys: factors.passkeys,
    required_by_tenant: policy.requireMfa,
  };
}

/** A new secret to set up (replacing one not confirmed yet); TOTP already on must be turned off first. */
export async function startTotp(ctx: AuthContext, user: UserPrincipal) {
  const { totpSealed } = await ctx.mfa.factors(user.userId);
  if (totpSealed !== null)
    throw new ApiError(
      409,
      'totp_enabled',
      'two-step sign-in with an authenticator app is already on: turn it off first',
    );
  const secret = newTotpSecret();
  await ctx.mfa.setPendingTotp(user.userId, sealTotpSecret(ctx, user.userId, secret));
  return { secret, otpauth_url: otpauthUrl(secret, user.email) };
}

async function limited(ctx: AuthContext, user: UserPrincipal, ip: string): Promise<void> {
  const retryAfter = await ctx.limiter.retryAfterSeconds(user.email, ip, ctx.now());
  if (retryAfter > 0) throw new TooManyAttempts(retryAfter);
}

/** The first code from the app turns TOTP on; the ten recovery codes are shown this once. */
export async function confirmTotp(ctx: AuthContext, user: UserPrincipal, code: string, ip: string) {
  await limited(ctx, user, ip);
  const pending = await ctx.mfa.pendingTotp(user.userId);
  if (pending === null)
    throw new ApiError(409, 'no_totp_setup', 'no authenticator app is being set up: start the setup again');
  const secret = openTotpSecret(ctx, user.userId, pending);
  const step = totpStep(secret, code, ctx.now());
  if (step === undefined) {
    await ctx.limiter.failed(user.email, ip, ctx.now());
    throw new ApiError(
      400,
      'invalid_code',
      "the code does not match: check the app's clock and enter the code it shows now",
    );
  }
  const codes = newRecoveryCodes();
  const enabled = await ctx.mfa.enableTotp(
    user.userId,
    pending,
    sealTotpSecret(ctx, user.userId, secret),
    step,
    codes.map((c) => hashSecret(c)),
    ctx.now().toISOString(),
  );
  if (!enabled) throw new ApiError(409, 'no_totp_setup', 'the setup changed meanwhile: start it again');
  return { recovery_codes: codes };
}

/** A current TOTP code or an unused recovery code proves the user still holds the factor. */
async function proveFactor(ctx: AuthContext, user: UserPrincipal, code: string, ip: string): Promise<void> {
  await limited(ctx, user, ip);
  const { totpSealed } = await ctx.mfa.factors(user.userId);
  if (totpSealed === null) throw new ApiError(409, 'totp_not_enabled', 'two-step sign-in with an app is not on');
  const step = totpStep(openTotpSecret(ctx, user.userId, totpSealed), code, ctx.now());
  const ok =
    step !== undefined
      ? await ctx.mfa.acceptStep(user.userId, step)
      : await ctx.mfa.useRecoveryCode(user.userId, hashSecret(normaliseRecoveryCode(code)), ctx.now().toISOString());
  if (!ok) {
    await ctx.limiter.failed(user.email, ip, ctx.now());
    throw wrongCode();
  }
}

export async function disableTotp(ctx: AuthContext, user: UserPrincipal, code: string, ip: string): Promise<void> {
  const [factors, policy] = await Promise.all([ctx.mfa.factors(user.userId), ctx.mfa.policy(user.tenantId)]);
  if (policy.requireMfa && factors.passkeys === 0)
    throw new ApiError(
      409,
      'mfa_required_by_tenant',
      'your organisation requires two-step sign-in: add a passkey before turning the authenticator app off',
    );
  await proveFactor(ctx, user, code, ip);
  await ctx.mfa.disableTotp(user.userId);
}

export async function renewRecoveryCodes(ctx: AuthContext, user: UserPrincipal, code: string, ip: string) {
  await proveFactor(ctx, user, code, ip);
  const codes = newRecoveryCodes();
  await ctx.mfa.replaceRecoveryCodes(
    user.userId,
    codes.map((c) => hashSecret(c)),
  );
  return { recovery_codes: codes };
}
