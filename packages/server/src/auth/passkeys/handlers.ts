// Passkeys (WebAuthn, with @simplewebauthn/server): a user adds, names and removes their own;
// a passkey then signs in without a password (a discoverable credential, the user verified by
// the authenticator) or completes a password sign-in as its second factor.
//
// The relying party is the server's public URL: RP ID its hostname, the only origin accepted
// its origin. Every challenge is a flow in the database (auth/flows.ts, 5 min, taken once), so
// whichever replica answers the second request can check it, and an answer is never accepted
// twice. A signature counter that does not move forward (when the authenticator keeps one) is
// refused: a cloned authenticator. A failed passkey sign-in counts toward the login limits like
// a wrong password, and every failure gets the same answer (401 passkey_not_accepted). A tenant
// that signs in through its SSO (sso_only) takes a password-less passkey from its admins only
// (break-glass, as passwords): its identity provider decides who else may come in.

import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { Static } from 'typebox';
import { ApiError, conflict, notFound } from '../../kernel/errors.ts';
import type { AuthContext } from '../context.ts';
import type { UserPrincipal } from '../principal.ts';
import { hashSecret } from '../secrets.ts';
import { finishMfa, type MfaStepData, TooManyAttempts } from '../sessions/handlers.ts';
import { openSession, type SignedIn } from '../sign-in.ts';
import type { NewPasskey, Passkey, PasskeysRepository } from './repository.ts';
import type { AddPasskey, AuthenticationResponse } from './schemas.ts';

export interface PasskeyContext extends AuthContext {
  passkeys: PasskeysRepository;
}

export interface Client {
  ip: string;
  userAgent: string;
}

/** How long a ceremony may take: the browser's timeout and the challenge's life. */
const CEREMONY_MS = 5 * 60_000;

/**
 * The public-key algorithms accepted (COSE ids): EdDSA, ES256, RS256 — what authenticators make.
 * Named here, not left to the library's default, which probes Node's experimental ML-DSA.
 */
const ALGORITHMS = [-8, -7, -257];

/** A user keeps at most this many passkeys (each is offered in every second-factor request). */
export const MAX_PASSKEYS_PER_USER = 20;

/** Wrong answers to one password step before it ends (as for a TOTP code). */
const MFA_ATTEMPTS = 5;

/** The login limits' account key of a passkey sign-in whose credential is unknown. */
const UNKNOWN_PASSKEY_ACCOUNT = 'passkey:unknown';

const TRANSPORTS = new Set<string>(['ble', 'hybrid', 'internal', 'nfc', 'usb']);

const invalidPasskey = (message: string) => new ApiError(400, 'invalid_passkey', message);
const notAccepted = () => new ApiError(401, 'passkey_not_accepted', 'this passkey was not accepted: try again');
const mfaExpired = () =>
  new ApiError(401, 'mfa_expired', 'this sign-in step expired or was already used: sign in with your password again');

interface RelyingParty {
  rpID: string;
  origin: string;
}

function relyingParty(ctx: AuthContext): RelyingParty {
  const url = new URL(ctx.publicUrl());
  return { rpID: url.hostname, origin: url.origin };
}

const transportsOf = (p: Passkey) =>
  (JSON.parse(p.transports) as string[]).filter((t) => TRANSPORTS.has(t)) as AuthenticatorTransport[];

function view(p: Passkey) {
  return {
    id: p.id,
    name: p.name,
    created_at: p.created_at,
    last_used_at: p.last_used_at,
    device_type: p.device_type === 'multiDevice' ? ('multiDevice' as const) : ('singleDevice' as const),
    backed_up: p.backed_up !== 0,
  };
}

/** The library's reason, kept short: it names what failed (challenge, origin, RP ID…), never a secret. */
const reason = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 200);

// --- the account API --------------------------------------------------------------------------

/**
 * A passkey is added through a console session only: it is a way to sign in, and a bearer
 * token (which may be scoped, or leaked to a script's host) must not mint one. The ceremony
 * runs in the browser anyway.
 */
function requireSession(user: UserPrincipal): void {
  if (!user.session)
    throw new ApiError(403, 'session_required', 'a passkey is added from a console session, not with an API token');
}

export async function listPasskeys(ctx: PasskeyContext, user: UserPrincipal) {
  return { passkeys: (await ctx.passkeys.listOf(user.userId)).map(view) };
}

export async function registrationOptions(ctx: PasskeyContext, user: UserPrincipal) {
  requireSession(user);
  const existing = await ctx.passkeys.listOf(user.userId);
  if (existing.length >= MAX_PASSKEYS_PER_USER)
    throw conflict(
      `you have ${MAX_PASSKEYS_PER_USER} passkeys, the most one account keeps: remove one first`,
      'too_many_passkeys',
    );
  const rp = relyingParty(ctx);
  const options = await generateRegistrationOptions({
    rpName: 'Guard',
    rpID: rp.rpID,
    userName: user.email,
    userDisplayName: user.email,
    // The user handle a discoverable passkey answers with: the user's id (no personal data).
    userID: new TextEncoder().encode(user.userId),
    attestationType: 'none',
    timeout: CEREMONY_MS,
    excludeCredentials: existing.map((p) => ({ id: p.id, transports: transportsOf(p) })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
  const flowId = await ctx.flows.start('webauthn_register', {
    userId: user.userId,
    tenantId: user.tenantId,
    data: { challenge: options.challenge },
    ttlMs: CEREMONY_MS,
  });
  return { flow_id: flowId, options };
}

export async function addPasskey(ctx: PasskeyContext, user: UserPrincipal, body: Static<typeof AddPasskey>) {
  requireSession(user);
  const flow = await ctx.flows.take<{ challenge: string }>('webauthn_register', body.flow_id);
  if (!flow || flow.userId !== user.userId)
    throw invalidPasskey('this passkey request expired or was already answered: add the passkey again');
  const rp = relyingParty(ctx);
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      // Its shape was bounded by the route's schema; the library checks every field's meaning.
      response: body.response as RegistrationResponseJSON,
      expectedChallenge: flow.data.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      requireUserVerification: false,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch (error) {
    throw invalidPasskey(`the passkey was not accepted: ${reason(error)}`);
  }
  if (!verified.verified) throw invalidPasskey('the passkey was not accepted');
  const info = verified.registrationInfo;
  if ((await ctx.passkeys.listOf(user.userId)).length >= MAX_PASSKEYS_PER_USER)
    throw conflict(
      `you have ${MAX_PASSKEYS_PER_USER} passkeys, the most one account keeps: remove one first`,
      'too_many_passkeys',
    );
  const row: NewPasskey = {
    id: info.credential.id,
    user_id: user.userId,
    name: body.name.trim() || 'Passkey',
    public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: JSON.stringify((info.credential.transports ?? []).filter((t) => TRANSPORTS.has(t))),
    device_type: info.credentialDeviceType,
    backed_up: info.credentialBackedUp ? 1 : 0,
    created_at: ctx.now().toISOString(),
    last_used_at: null,
  };
  if (!(await ctx.passkeys.insert(row))) throw conflict('this passkey is already registered', 'passkey_exists');
  return view(row);
}

export async function renamePasskey(ctx: PasskeyContext, user: UserPrincipal, id: string, name: string) {
  const row = await ctx.passkeys.rename(user.userId, id, name.trim() || 'Passkey');
  if (!row) throw notFound('passkey');
  return view(row);
}

export async function removePasskey(ctx: PasskeyContext, user: UserPrincipal, id: string): Promise<void> {
  if (!(await ctx.passkeys.remove(user.userId, id))) throw notFound('passkey');
}

// --- sign-in ----------------------------------------------------------------------------------

/** Options for a password-less sign-in: any discoverable passkey of this site, the user verified. */
export async function signInOptions(ctx: PasskeyContext) {
  const rp = relyingParty(ctx);
  const options = await generateAuthenticationOptions({
    rpID: rp.rpID,
    userVerification: 'required',
    timeout: CEREMONY_MS,
  });
  const flowId = await ctx.flows.start('webauthn_sign_in', {
    data: { challenge: options.challenge },
    ttlMs: CEREMONY_MS,
  });
  return { flow_id: flowId, options };
}

/**
 * Checks an assertion against a stored passkey and records its use; false for any failure (the
 * caller answers every one alike). The counter is written only if no other use moved it since.
 */
async function assertionHolds(
  ctx: PasskeyContext,
  passkey: Passkey,
  challenge: string,
  answer: Static<typeof AuthenticationResponse>,
  requireUserVerification: boolean,
): Promise<boolean> {
  const rp = relyingParty(ctx);
  try {
    const { verified, authenticationInfo } = await verifyAuthenticationResponse({
      // Its shape was bounded by the route's schema; the library checks every field's meaning.
      response: answer as AuthenticationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      // The library refuses a counter that did not increase (when either is nonzero).
      credential: {
        id: passkey.id,
        publicKey: Buffer.from(passkey.public_key, 'base64url'),
        counter: passkey.counter,
        transports: transportsOf(passkey),
      },
      requireUserVerification,
    });
    if (!verified) return false;
    return ctx.passkeys.used(passkey.id, passkey.counter, authenticationInfo.newCounter, ctx.now().toISOString());
  } catch {
    return false;
  }
}

async function refuseWhileLimited(ctx: PasskeyContext, account: string, client: Client): Promise<void> {
  const retryAfter = await ctx.limiter.retryAfterSeconds(account, client.ip, ctx.now());
  if (retryAfter > 0) throw new TooManyAttempts(retryAfter);
}

/** A password-less sign-in: the passkey names its user; the session is opened like any sign-in's. */
export async function signInWithPasskey(
  ctx: PasskeyContext,
  body: { flow_id: string; response: Static<typeof AuthenticationResponse> },
  client: Client,
): Promise<SignedIn> {
  const owner = await ctx.passkeys.withOwner(body.response.id);
  const account = owner?.user.email ?? UNKNOWN_PASSKEY_ACCOUNT;
  await refuseWhileLimited(ctx, account, client);
  // Taken before anything is checked: a challenge is answered once, right or wrong.
  const flow = await ctx.flows.take<{ challenge: string; mfa_token_hash?: string }>('webauthn_sign_in', body.flow_id);
  const userHandle = body.response.response.userHandle;
  const accepted =
    flow !== undefined &&
    flow.data.mfa_token_hash === undefined &&
    owner !== undefined &&
    !owner.user.deactivated &&
    // A discoverable passkey answers with the user handle it was made for: it must be its owner's.
    (userHandle === undefined || Buffer.from(userHandle, 'base64url').toString() === owner.user.id) &&
    (await assertionHolds(ctx, owner.passkey, flow.data.challenge, body.response, true));
  if (!accepted || !owner) {
    await ctx.limiter.failed(account, client.ip, ctx.now());
    throw notAccepted();
  }
  // Told only to the passkey's holder (checked after the passkey): not a failed guess.
  if (owner.ssoOnly && owner.user.role !== 'admin')
    throw new ApiError(
      403,
      'sso_required',
      'your organisation signs in through its single sign-on: use Sign in with SSO',
    );
  const signedIn = await openSession(ctx, owner.user, client, 'passkey');
  await ctx.limiter.succeeded(account, client.ip);
  return signedIn;
}

/** The user of a live password step, and their email (for the login limits). */
async function mfaStep(ctx: PasskeyContext, mfaToken: string) {
  const flow = await ctx.flows.find<MfaStepData>('mfa', mfaToken);
  const account = flow?.userId ? await ctx.credentials.accountById(flow.userId) : undefined;
  if (!flow || !account) throw mfaExpired();
  return { flow, account };
}

/**
 * Options for a passkey as the second factor of a password sign-in: the user's passkeys are
 * allowed. The challenge's flow is keyed by the challenge itself (the answer carries it back)
 * and tied to the password step by its token's hash.
 */
export async function secondFactorOptions(ctx: PasskeyContext, mfaToken: string) {
  const { account } = await mfaStep(ctx, mfaToken);
  const passkeys = await ctx.passkeys.listOf(account.id);
  if (passkeys.length === 0) throw new ApiError(400, 'no_passkeys', 'this account has no passkey: use another method');
  const rp = relyingParty(ctx);
  const options = await generateAuthenticationOptions({
    rpID: rp.rpID,
    allowCredentials: passkeys.map((p) => ({ id: p.id, transports: transportsOf(p) })),
    userVerification: 'preferred',
    timeout: CEREMONY_MS,
  });
  await ctx.flows.start('webauthn_sign_in', {
    key: options.challenge,
    userId: account.id,
    tenantId: account.tenant_id,
    data: { challenge: options.challenge, mfa_token_hash: hashSecret(mfaToken) },
    ttlMs: CEREMONY_MS,
  });
  return { options };
}

/** The challenge a browser signed, read from its client data (checked again by the library). */
function challengeOf(response: Static<typeof AuthenticationResponse>): string | undefined {
  try {
    const clientData = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString());
    return typeof clientData?.challenge === 'string' ? clientData.challenge : undefined;
  } catch {
    return undefined;
  }
}

/** Completes a password sign-in with one of the user's passkeys. */
export async function secondFactorWithPasskey(
  ctx: PasskeyContext,
  body: { mfa_token: string; response: Static<typeof AuthenticationResponse> },
  client: Client,
): Promise<SignedIn> {
  const { flow, account } = await mfaStep(ctx, body.mfa_token);
  await refuseWhileLimited(ctx, account.email, client);
  const challenge = challengeOf(body.response);
  const challengeFlow = challenge
    ? await ctx.flows.take<{ challenge: string; mfa_token_hash?: string }>('webauthn_sign_in', challenge)
    : undefined;
  const owner = await ctx.passkeys.withOwner(body.response.id);
  const accepted =
    challengeFlow !== undefined &&
    challengeFlow.userId === account.id &&
    challengeFlow.data.mfa_token_hash === hashSecret(body.mfa_token) &&
    owner !== undefined &&
    owner.user.id === account.id &&
    (await assertionHolds(ctx, owner.passkey, challengeFlow.data.challenge, body.response, false));
  if (!accepted) {
    await ctx.flows.failed('mfa', body.mfa_token, MFA_ATTEMPTS);
    await ctx.limiter.failed(account.email, client.ip, ctx.now());
    throw notAccepted();
  }
  // The password step is used once: of two answers given at once, one goes on.
  return finishMfa(ctx, body.mfa_token, flow, 'passkey', client);
}
