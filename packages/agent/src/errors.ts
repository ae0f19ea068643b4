// Typed errors of guard-agent. Only main.ts turns them into exit codes (its EXIT_CODES); 130 and
// 143 are never set here: they come from the default SIGINT/SIGTERM disposition, as the
// agent installs no signal handlers (spec 1.7).

export type ErrorKind =
  | 'usage' // bad flags or arguments
  | 'config' // the config file is missing, unreadable or invalid
  | 'output_exists' // a file or symlink already sits at the --out path
  | 'output_dir' // the output directory cannot be created or written
  | 'redaction' // a log member could not be redacted (it is never included unredacted)
  | 'bundle' // a bundle file is missing, corrupt, or does not match its manifest
  | 'not_enrolled' // <state_dir>/enrollment.json is missing, unreadable or invalid
  | 'insecure_url' // a plain http:// URL to a host that is not loopback
  | 'network' // the service could not be reached (after the retries)
  | 'server' // the service answered with an error status or an unexpected body
  | 'io'; // any other file or system error

export class AgentError extends Error {
  readonly kind: ErrorKind;
  constructor(kind: ErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AgentError';
    this.kind = kind;
  }
}

/** `ENOENT: no such file…` → `no such file or directory`, for messages that name the path themselves. */
export function describeSystemError(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (e && typeof e.code === 'string') {
    const known: Record<string, string> = {
      ENOENT: 'no such file or directory',
      EACCES: 'permission denied',
      EPERM: 'operation not permitted',
      EISDIR: 'is a directory',
      ENOTDIR: 'a parent is not a directory',
      EEXIST: 'already exists',
      ENOSPC: 'no space left on device',
      EROFS: 'read-only file system',
      ELOOP: 'too many levels of symbolic links',
    };
    return known[e.code] ?? `${e.code}: ${e.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}
