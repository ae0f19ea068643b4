// The CLI's outcomes and their exit codes, in one table (docs/guard-listen.md, "Exit codes").
// Commands throw ListenError with a kind; only main.ts turns a kind into a code.

export type ErrorKind =
  /** A flag, URL, secret or event type that cannot be used (refused here or by the server's 400). */
  | 'usage'
  /** The server refused the token (401) or its user may not do this (403). */
  | 'auth'
  /** The server could not be reached: connection refused, name not found, TLS failed. */
  | 'unreachable'
  /** The server answered, but not as a Guard server of this version does. */
  | 'server';

export const EXIT_CODES: Record<ErrorKind | 'ok' | 'unexpected', number> = {
  ok: 0,
  unexpected: 1,
  server: 1,
  usage: 2,
  auth: 3,
  unreachable: 4,
};

export class ListenError extends Error {
  readonly kind: ErrorKind;
  constructor(kind: ErrorKind, message: string) {
    super(message);
    this.name = 'ListenError';
    this.kind = kind;
  }
}
