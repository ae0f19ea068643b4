// Every error the API answers has the shape {"error": {"code", "message"}} (errors.ts):
// ApiErrors with their status, schema violations as 400 invalid_request, other 4xx Fastify
// raises with their status, anything unexpected as an opaque 500 whose details go to the log
// only — and so do requests no route matches, errors Fastify raises before routing, and
// broken HTTP that never reaches Fastify.

import type { FastifyError, FastifyInstance, FastifyServerOptions } from 'fastify';
import type { ServerConfig } from './config.ts';
import { ApiError } from './errors.ts';
import { answerAndClose } from './http-limits.ts';

/** The error and not-found handlers of the app. */
export function errorResponses(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, req, reply) => {
    if (error instanceof ApiError)
      return reply.code(error.status).send({ error: { code: error.code, message: error.message } });
    if ((error as FastifyError).validation) {
      return reply.code(400).send({ error: { code: 'invalid_request', message: error.message } });
    }
    const status = (error as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) {
      const code = (error as FastifyError).code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'body_too_large' : 'invalid_request';
      return reply.code(status).send({ error: { code, message: error.message } });
    }
    req.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ error: { code: 'internal', message: 'internal server error' } });
  });
  app.setNotFoundHandler((req, reply) =>
    reply
      .code(404)
      .send({ error: { code: 'not_found', message: `no route for ${req.method} ${req.url.split('?')[0]}` } }),
  );
}

/** Errors Fastify raises before routing (a bad percent-escape, an over-long parameter). */
export const frameworkErrors: FastifyServerOptions['frameworkErrors'] = (error, _req, reply) => {
  const status = (error as FastifyError).statusCode ?? 400;
  (reply as unknown as { code(n: number): { send(b: unknown): void } })
    .code(status)
    .send({ error: { code: status === 414 ? 'uri_too_long' : 'invalid_request', message: error.message } });
};

/** Broken HTTP framing and late headers, which never reach Fastify's router. */
export function clientErrors(limits: ServerConfig['limits']): FastifyServerOptions['clientErrorHandler'] {
  return (error, socket) => {
    if ((error as NodeJS.ErrnoException).code === 'ERR_HTTP_REQUEST_TIMEOUT')
      return answerAndClose(
        socket,
        408,
        'Request Timeout',
        'request_timeout',
        `the request headers did not arrive within ${limits.headerTimeoutMs / 1000} s`,
      );
    if (!socket.writable) return socket.destroy(error);
    answerAndClose(socket, 400, 'Bad Request', 'bad_request', 'malformed HTTP request');
  };
}
