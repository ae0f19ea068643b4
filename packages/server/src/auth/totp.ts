// Two-step sign-in's second factor (DESIGN §6): TOTP per RFC 6238 — SHA-1, 6 digits, 30 s
// steps, one step of drift either way — through `otpauth` (a well-kept implementation of RFC
// 4226/6238 with the otpauth:// URL authenticator apps read), and the ten single-use recovery
// codes. A code is accepted once: the step it belongs to is returned so the caller records it
// and refuses that step (or an earlier one) afterwards.

import { randomInt } from 'node:crypto';
import * as OTPAuth from 'otpauth';

const PERIOD = 30;
const DIGITS = 6;
/** One step of drift either way. */
const WINDOW = 1;
const RECOVERY_CODES = 10;

function totpOf(secretBase32: string, label = 'Guard'): OTPAuth.TOTP {
  return new OTPAuth.TOTP({
    issuer: 'Guard',
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD,
    secret: OTPAuth.Secret.fromBase32(secretBase32),
  });
}

/** A new secret: 160 random bits (RFC 4226's recommended length), base32. */
export function newTotpSecret(): string {
  return new OTPAuth.Secret({ size: 20 }).base32;
}

/** The otpauth:// URL an authenticator app reads from the QR code: `Guard:<email>`. */
export function otpauthUrl(secretBase32: string, email: string): string {
  return totpOf(secretBase32, email).toString();
}

/** Spaces and dashes that people type are dropped. */
export function normaliseCode(code: string): string {
  return code.replace(/[\s-]/g, '');
}

/**
 * The time step of `code` when it is right at `now` (within one step either way), else
 * undefined. The caller accepts it only if the step is later than the last one accepted.
 */
export function totpStep(secretBase32: string, code: string, now: Date): number | undefined {
  const token = normaliseCode(code);
  if (!/^\d{6}$/.test(token)) return undefined;
  const delta = totpOf(secretBase32).validate({ token, timestamp: now.getTime(), window: WINDOW });
  if (delta === null) return undefined;
  return OTPAuth.TOTP.counter({ period: PERIOD, timestamp: now.getTime() }) + delta;
}

/** The code of the step at `at` (tests and the lead's own checks: an authenticator app's answer). */
export function totpCode(secretBase32: string, at: Date): string {
  return totpOf(secretBase32).generate({ timestamp: at.getTime() });
}

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/**
 * Ten recovery codes, `xxxxx-xxxxx` from an alphabet without look-alikes (0/o, 1/l/i): 10
 * characters of 31, about 49 bits each, enough for a code that is also rate-limited and used once.
 */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const chars = Array.from({ length: 10 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]);
    return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
  });
}

/** A recovery code as typed (any case, with or without its dash) in the form its hash is made of. */
export function normaliseRecoveryCode(code: string): string {
  const c = normaliseCode(code).toLowerCase();
  return c.length === 10 ? `${c.slice(0, 5)}-${c.slice(5)}` : c;
}
