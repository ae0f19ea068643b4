// CSRF defence of cookie-authenticated writes (docs/console.md#csrf), two checks that must
// both pass: the request comes from the console's own origin (Origin, or Referer when a
// browser sent no Origin), and it carries X-CSRF-Token, which only a page of that origin
// could have read from the session or login response.
//
// The token is HMAC-SHA256(server key, session token hash): nothing is stored, it can be
// handed out again by GET /v1/auth/session (the console reloads), it dies with its session,
// and it cannot be computed without the server key even by someone who reads the database.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../kernel/errors.ts';

export const CSRF_HEADER = 'x-csrf-token';

export const csrfFailed = (message: string) => new ApiError(403, 'csrf_failed', message);

export function csrfToken(key: Buffer, sessionTokenHash: string): string {
  return createHmac('sha256', key).update(`csrf:${sessionTokenHash}`).digest('base64url');
}

/** The origin the request says it came from: Origin, else Referer's origin; undefined when neither. */
export function requestOrigin(headers: { origin?: string; referer?: string }): string | undefined {
  if (headers.origin !== undefined) return headers.origin;
  if (headers.referer === undefined) return undefined;
  try {
    return new URL(headers.referer).origin;
  } catch {
    return 'invalid';
  }
}

/**
 * Refuses a cookie-authenticated write that is not from `publicOrigin` or lacks the session's
 * token. Compared in constant time.
 */
export function checkCsrf(
  headers: { origin?: string; referer?: string; [CSRF_HEADER]?: string | string[] },
  publicOrigin: string,
  expected: string,
): void {
  const origin = requestOrigin(headers);
  if (origin !== publicOrigin)
    throw csrfFailed(
      origin === undefined
        ? 'a cookie-authenticated write must carry an Origin (or Referer) header'
        : `the request's origin ${origin} is not the console's (${publicOrigin})`,
    );
  const given = headers[CSRF_HEADER];
  if (typeof given !== 'string' || given === '') throw csrfFailed('the X-CSRF-Token header is missing');
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b))
    throw csrfFailed('the X-CSRF-Token header does not match the session');
}

/**
 * For the routes that sign in without a session (login, set-password): a browser request
 * from another origin is refused (login CSRF); a client that sends neither header (curl, a
 * script) is let through, as it cannot be a forged browser request.
 */
export function checkSameOriginIfBrowser(headers: { origin?: string; referer?: string }, publicOrigin: string): void {
  const origin = requestOrigin(headers);
  if (origin !== undefined && origin !== publicOrigin && origin !== 'null')
    throw csrfFailed(`the request's origin ${origin} is not the console's (${publicOrigin})`);
  if (origin === 'null') throw csrfFailed('a request from an opaque origin is refused');
}
