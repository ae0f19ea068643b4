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

/** Seconds a client is told to wait (Retry-After) when the database or the object store cannot be reached. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** System error codes of a connection that was refused, reset, timed out or could not be routed. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
]);
/**
 * PostgreSQL SQLSTATEs of a server that cannot serve right now: class 08 (connection
 * exception) and these: admin_shutdown, crash_shutdown, cannot_connect_now (starting up or
 * shutting down), too_many_connections.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** SQLITE_FULL (the primary result code; it has no extended ones). */
const SQLITE_FULL = 13;

/** Errors the database layer saw come from a lost connection, which `pg` reports without a code. */
const lostConnections = new WeakSet<object>();

/** Records that `error` came from a connection to a dependency that was lost. */
export function markUnreachable(error: unknown): void {
  if (typeof error === 'object' && error !== null) lostConnections.add(error);
}

/** `error`, its causes and the errors it aggregates (a connection tried on several addresses). */
function* errorChain(error: unknown, depth = 0): Generator<{ code?: unknown; errcode?: unknown }> {
  if (typeof error !== 'object' || error === null || depth > 5) return;
  yield error as { code?: unknown; errcode?: unknown };
  const e = error as { cause?: unknown; errors?: unknown };
  yield* errorChain(e.cause, depth + 1);
  if (Array.isArray(e.errors)) for (const inner of e.errors) yield* errorChain(inner, depth + 1);
}

/**
 * Whether `error` means that the database or the object store cannot be reached right now (a
 * refused or lost connection, a server shutting down or starting up): the API answers 503 with
 * Retry-After, and the same request succeeds once it is back. Recognised by system error
 * code and SQLSTATE, never by message text, or by the database layer's mark.
 */
export function isUnreachable(error: unknown): boolean {
  for (const e of errorChain(error)) {
    if (lostConnections.has(e)) return true;
    if (typeof e.code !== 'string') continue;
    if (UNREACHABLE_CODES.has(e.code) || UNAVAILABLE_SQLSTATES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code))
      return true;
  }
  return false;
}

/** Whether `error` is a full disk: SQLite's SQLITE_FULL, or ENOSPC/EDQUOT of a file write. */
export function isStorageFull(error: unknown): boolean {
  for (const e of errorChain(error)) {
    if (typeof e.errcode === 'number' && (e.errcode & 0xff) === SQLITE_FULL) return true;
    if (e.code === 'ENOSPC' || e.code === 'EDQUOT') return true;
  }
  return false;
}
