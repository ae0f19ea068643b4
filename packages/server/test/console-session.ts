// Helpers for tests of the console's cookie sessions: sign in as a browser would (same-origin
// fetch with an Origin header), then call the API with the cookie and the CSRF token.

import { type ApiOptions, type ApiResult, api, type Loose } from './harness.ts';

export interface Browser {
  /** `guard_session=<token>`, as the browser sends it back. */
  cookie: string;
  csrf: string;
  /** The origin the console is served from (the server's public URL). */
  origin: string;
  login: Loose;
}

/** The name=value of the guard_session Set-Cookie of a response, if any. */
export function sessionSetCookie(res: ApiResult): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith('guard_session='));
}

export async function signIn(base: string, email: string, password: string, origin = base): Promise<Browser> {
  const res = await api(base, 'POST', '/v1/auth/login', { body: { email, password }, headers: { origin } });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
  const setCookie = sessionSetCookie(res);
  if (!setCookie) throw new Error('sign-in set no guard_session cookie');
  return { cookie: setCookie.split(';')[0], csrf: res.json.csrf_token, origin, login: res.json };
}

/** A request as the console sends it: the cookie, and on writes the Origin and X-CSRF-Token. */
export function asBrowser(
  base: string,
  b: Browser,
  method: string,
  path: string,
  options: ApiOptions & { csrf?: string | null; origin?: string | null } = {},
): Promise<ApiResult> {
  const headers: Record<string, string> = { cookie: b.cookie, ...options.headers };
  if (method !== 'GET' && method !== 'HEAD') {
    const origin = options.origin === undefined ? b.origin : options.origin;
    const csrf = options.csrf === undefined ? b.csrf : options.csrf;
    if (origin !== null) headers.origin = origin;
    if (csrf !== null) headers['x-csrf-token'] = csrf;
  }
  return api(base, method, path, { ...options, headers });
}
