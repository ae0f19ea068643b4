// One error type for the API, serialised as {"error": {"code", "message"}} (DESIGN §4).
// Anything that is not an ApiError becomes an opaque 500: its details go to the log only.

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

export const badRequest = (message: string, code = 'invalid_request') => new ApiError(400, code, message);
export const unauthorized = (message = 'missing or invalid credentials') => new ApiError(401, 'unauthorized', message);
export const forbidden = (message = 'this credential may not do that') => new ApiError(403, 'forbidden', message);
export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);
export const conflict = (message: string, code: string) => new ApiError(409, code, message);

/** Unique-constraint violations by SQLite extended result code or PostgreSQL SQLSTATE, never by message text. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; errcode?: number };
  return e?.errcode === 2067 || e?.errcode === 1555 || e?.code === '23505'; // SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY; unique_violation
}
