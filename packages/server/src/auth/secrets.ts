// Ids, bearer secrets and passwords. Bearer secrets carry 256 random bits, so a SHA-256 is
// a sufficient at-rest form and lets the lookup be an indexed equality on the hash (the
// secret itself is never compared). Passwords are low-entropy: scrypt, compared in constant time.

import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;

/** Prefixes tell secrets apart in logs, leak scanners and the auth lookup. */
export const SECRET_PREFIX = {
  agentKey: 'gak',
  userToken: 'gut',
  enrollToken: 'get',
  /** A console session (the guard_session cookie); never a bearer token. */
  sessionToken: 'gss',
  /** A one-time set-password link (in the link's URL fragment). */
  passwordLink: 'gsp',
  /** A tenant's SCIM provisioning token (bearer, on /scim/v2 only). */
  scimToken: 'gsc',
} as const;
export type SecretKind = keyof typeof SECRET_PREFIX;

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

export function newSecret(kind: SecretKind): string {
  return `${SECRET_PREFIX[kind]}_${randomBytes(32).toString('base64url')}`;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretKind(secret: string): SecretKind | undefined {
  const prefix = secret.slice(0, secret.indexOf('_'));
  return (Object.keys(SECRET_PREFIX) as SecretKind[]).find((k) => SECRET_PREFIX[k] === prefix);
}

/** A password people can type: 24 base64url chars, 144 bits. */
export function newPassword(): string {
  return randomBytes(18).toString('base64url');
}

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** The stored form of "no password set yet": no password verifies against it. */
export const NO_PASSWORD = '!';

export function hasPassword(stored: string): boolean {
  return stored.startsWith('scrypt$');
}

let dummyHash: Promise<string> | undefined;

/**
 * verifyPassword, but an unknown account (stored undefined) or one without a password costs
 * the same scrypt run as a wrong password: the answer's timing does not tell them apart.
 */
export async function checkPassword(password: string, stored: string | undefined): Promise<boolean> {
  if (stored !== undefined && hasPassword(stored)) return verifyPassword(password, stored);
  dummyHash ??= hashPassword(randomBytes(18).toString('base64url'));
  await verifyPassword(password, await dummyHash);
  return false;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !key) return false;
  const want = Buffer.from(key, 'base64url');
  const got = await scrypt(password, Buffer.from(salt, 'base64url'), want.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(got, want);
}
