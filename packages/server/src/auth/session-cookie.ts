// The console's session cookie. One cookie with fixed attributes, so it is read and written
// here in a few lines rather than through a cookie library: HttpOnly (scripts never see it),
// SameSite=Strict (no other site's page sends it), Path=/ (the API and the console share it),
// Secure when the public URL is https. The value is `gss_` + base64url: nothing to escape.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'guard_session';

const VALUE = /^gss_[A-Za-z0-9_-]{20,100}$/;

/** The session token of a Cookie header, or undefined (absent, or not a token's shape). */
export function readSessionCookie(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (VALUE.test(value)) return value;
  }
  return undefined;
}

function attributes(secure: boolean): string {
  return `Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/**
 * Set-Cookie for a new session. No Max-Age: the browser keeps it until it is closed, and the
 * server ends it by its idle and absolute expiry anyway.
 */
export function sessionCookie(token: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; ${attributes(secure)}`;
}

/** Set-Cookie that removes the cookie (sign-out, a session revoked or expired). */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Max-Age=0; ${attributes(secure)}`;
}

/** Cookies are Secure when the console is served over https. */
export function isSecureUrl(publicUrl: string): boolean {
  return publicUrl.startsWith('https:');
}

/**
 * The cookie that binds a single sign-on round trip to the browser that started it (login
 * CSRF: without it, a callback URL made with an attacker's own account and opened in a
 * victim's browser would sign the victim in as the attacker). SameSite=Lax, so that the
 * identity provider's top-level redirect back carries it; only sent to /v1/auth/; 10 minutes.
 */
export const SSO_BINDING_COOKIE = 'guard_sso';

const BINDING = /^[A-Za-z0-9_-]{20,100}$/;

export function ssoBindingCookie(value: string, secure: boolean): string {
  return `${SSO_BINDING_COOKIE}=${value}; Path=/v1/auth/; HttpOnly; SameSite=Lax; Max-Age=600${secure ? '; Secure' : ''}`;
}

export function clearedSsoBindingCookie(secure: boolean): string {
  return `${SSO_BINDING_COOKIE}=; Path=/v1/auth/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`;
}

/** A new binding: the cookie's value, and the SHA-256 the round trip's flow keeps. */
export function newSsoBinding(): { binding: string; hash: string } {
  const binding = randomBytes(32).toString('base64url');
  return { binding, hash: createHash('sha256').update(binding).digest('hex') };
}

/** True when the request's guard_sso cookie is the one whose SHA-256 the flow kept (constant time). */
export function ssoBindingMatches(cookieHeader: string | undefined, hash: string | undefined): boolean {
  const binding = readSsoBinding(cookieHeader);
  if (binding === undefined || hash === undefined) return false;
  const got = createHash('sha256').update(binding).digest();
  const want = Buffer.from(hash, 'hex');
  return want.length === got.length && timingSafeEqual(got, want);
}

/** The binding of a Cookie header, or undefined. */
function readSsoBinding(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SSO_BINDING_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (BINDING.test(value)) return value;
  }
  return undefined;
}
