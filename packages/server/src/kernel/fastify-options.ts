// The options guard-server's Fastify instance is created with: its logger, how
// large a JSON body may be, how long a slow peer may take, how it closes, and the error shape
// of what fails before routing.

import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import { clientErrors, frameworkErrors, schemaErrorFormatter } from './error-responses.ts';
import { type HttpLimits, listenerTimeouts } from './http-limits.ts';

/** JSON bodies are small (a manifest is the largest); objects stream through their own route. */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

export function fastifyOptions(
  config: { limits: HttpLimits },
  options: { logger: FastifyBaseLogger; https?: { cert: Buffer; key: Buffer } },
): FastifyServerOptions & { loggerInstance: FastifyBaseLogger; https?: { cert: Buffer; key: Buffer } } {
  return {
    // HTTPS with the PEM pair of --tls-cert/--tls-key (server.ts reads and reloads it).
    ...(options.https ? { https: options.https } : {}),
    // The server's one logger (logger.ts: level, serializers, redaction), shared with the worker.
    loggerInstance: options.logger,
    bodyLimit: JSON_BODY_LIMIT_BYTES,
    // Header, body and keep-alive timeouts of slow peers (http-limits.ts).
    ...listenerTimeouts(config.limits),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // What fails before routing gets the API's error shape too (error-responses.ts).
    frameworkErrors,
    schemaErrorFormatter,
    clientErrorHandler: clientErrors(config.limits),
  };
}
