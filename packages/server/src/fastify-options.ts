// The options guard-server's Fastify instance is created with: what its log may hold, how
// large a JSON body may be, how long a slow peer may take, how it closes, and the error shape
// of what fails before routing.

import type { FastifyServerOptions } from 'fastify';
import type { ServerConfig } from './config.ts';
import { clientErrors, frameworkErrors } from './error-responses.ts';
import { listenerTimeouts } from './http-limits.ts';

/** JSON bodies are small (a manifest is the largest); objects stream through their own route. */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

/** Any secret of ours (auth/secrets.ts prefixes: gak_, gut_, get_, gss_, gsp_) in a path. */
const SECRET_IN_PATH = /\/g(?:ak|ut|et|ss|sp)_[^/?#]*/g;

/** The request URL as logged: no query string, no secret path segment. */
export function loggedUrl(url: string): string {
  return url.split('?')[0].replace(SECRET_IN_PATH, '/[REDACTED]');
}

export function fastifyOptions(config: ServerConfig, options: { logger?: boolean }): FastifyServerOptions {
  return {
    logger:
      options.logger === false
        ? false
        : {
            level: config.logLevel,
            // Secrets never reach the log: no headers (Authorization, Cookie, X-CSRF-Token), no
            // query strings (presigned URLs carry their signature there), and no path segment
            // that is a secret (a set-password link's token in /v1/auth/password-links/{token}).
            serializers: {
              req: (req) => ({ method: req.method, url: loggedUrl(req.url), remoteAddress: req.ip }),
            },
            redact: ['req.headers.authorization', 'headers.authorization', 'req.headers.cookie', 'headers.cookie'],
          },
    bodyLimit: JSON_BODY_LIMIT_BYTES,
    // Header, body and keep-alive timeouts of slow peers (http-limits.ts).
    ...listenerTimeouts(config.limits),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // What fails before routing gets the API's error shape too (error-responses.ts).
    frameworkErrors,
    clientErrorHandler: clientErrors(config.limits),
  };
}
