// The server's one logger, made once at start and handed to Fastify (request logs) and to the
// delivery worker, so that every line goes through the same level, serializers and redaction.

import { type Logger, pino } from 'pino';

export type { Logger } from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Any secret of ours (auth/secrets.ts prefixes: gak_, gut_, get_, gss_, gsp_) in a path. */
const SECRET_IN_PATH = /\/g(?:ak|ut|et|ss|sp)_[^/?#]*/g;

/** The request URL as logged: no query string, no secret path segment. */
export function loggedUrl(url: string): string {
  return url.split('?')[0].replace(SECRET_IN_PATH, '/[REDACTED]');
}

/** `enabled: false` (tests) logs nothing. */
export function createLogger(level: LogLevel, options: { enabled: boolean }): Logger {
  return pino({
    level,
    enabled: options.enabled,
    // Secrets never reach the log: no headers that carry them (Authorization, Cookie), no
    // query strings (presigned URLs carry their signature there), and no path segment that
    // is a secret (a set-password link's token in /v1/auth/password-links/{token}).
    serializers: {
      req: (req: { method: string; url: string; ip: string }) => ({
        method: req.method,
        url: loggedUrl(req.url),
        remoteAddress: req.ip,
      }),
    },
    redact: ['req.headers.authorization', 'headers.authorization', 'req.headers.cookie', 'headers.cookie'],
  });
}
