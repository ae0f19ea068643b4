// The console's one API client: openapi-fetch typed by schema.d.ts, which is generated from
// guard-server's own /openapi.json (scripts/generate-api.ts), so a changed route breaks the
// type check here. Requests carry the session cookie (same origin); every write carries the
// session's CSRF token in X-CSRF-Token (the server also checks Origin). Hooks call `unwrap`,
// which turns the {"error": {"code", "message"}} shape into an ApiError.

import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema.d.ts';

export type { paths };

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** The error object as the server sent it (some codes carry more than code and message). */
  readonly body: Record<string, unknown>;
  constructor(status: number, code: string, message: string, body: Record<string, unknown> = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

let csrfToken: string | undefined;

/** The session's CSRF token, from the login and session responses; cleared on sign-out. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const csrfHeader: Middleware = {
  onRequest({ request }) {
    if (!SAFE_METHODS.has(request.method) && csrfToken) request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use(csrfHeader);

function errorOf(status: number, body: unknown): ApiError {
  const e = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (e && typeof e.code === 'string' && typeof e.message === 'string')
    return new ApiError(status, e.code, e.message, e as Record<string, unknown>);
  return new ApiError(status, 'http_error', `The server answered ${status}.`);
}

/** The data of a successful call; an ApiError (or the network's own error) otherwise. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: Awaited<typeof call>;
  try {
    result = await call;
  } catch (error) {
    throw new ApiError(0, 'network_error', `The server could not be reached (${(error as Error).message}).`);
  }
  if (!result.response.ok) throw errorOf(result.response.status, result.error);
  return result.data as T;
}
