// The server's one logger, made once at start and handed to Fastify (request logs) and to the
// delivery worker, so that every line goes through the same level, serializers and redaction.

import { type Logger, pino } from 'pino';
import type { ServerConfig } from './config.ts';

export type { Logger } from 'pino';

/** `enabled: false` (tests) logs nothing. */
export function createLogger(level: ServerConfig['logLevel'], options: { enabled: boolean }): Logger {
  return pino({
    level,
    enabled: options.enabled,
    // Secrets never reach the log: no auth headers, and no query strings (presigned URLs
    // carry their signature there).
    serializers: {
      req: (req: { method: string; url: string; ip: string }) => ({
        method: req.method,
        url: req.url.split('?')[0],
        remoteAddress: req.ip,
      }),
    },
    redact: ['req.headers.authorization', 'headers.authorization'],
  });
}
