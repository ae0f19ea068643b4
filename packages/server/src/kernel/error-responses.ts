// Every error the API answers has the shape {"error": {"code", "message"}} (errors.ts):
// ApiErrors with their status, schema violations as 400 invalid_request, other 4xx Fastify
// raises with their status, a database or object store that cannot be reached as 503
// service_unavailable with Retry-After (the request may be sent again as it is), a full disk as
// 507 insufficient_storage (nothing was stored), anything unexpected as an opaque 500 whose
// details go to the log only — and so do requests no route matches, errors Fastify raises
// before routing, and broken HTTP that never reaches Fastify.

import type { FastifyError, FastifyInstance, FastifySchemaValidationError, FastifyServerOptions } from 'fastify';
import { ApiError, isStorageFull, isUnreachable, UNAVAILABLE_RETRY_AFTER_SECONDS } from './errors.ts';
import { answerAndClose, type HttpLimits } from './http-limits.ts';

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
    if (isUnreachable(error)) {
      req.log.warn({ err: error }, 'the database or the object store cannot be reached');
      return reply
        .code(503)
        .header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS))
        .send({
          error: {
            code: 'service_unavailable',
            message: `the service cannot reach its database or object store right now; retry in ${UNAVAILABLE_RETRY_AFTER_SECONDS} s (GET /readyz names the part that failed)`,
          },
        });
    }
    if (isStorageFull(error)) {
      req.log.error({ err: error }, 'the disk is full');
      return reply.code(507).send({
        error: {
          code: 'insufficient_storage',
          message: "the server's disk is full: nothing was stored; retry once space has been freed",
        },
      });
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

/**
 * The message of a schema violation: Fastify's `<dataVar><path> <message>`, except that a value
 * failing every branch of a union (anyOf) gets one sentence instead of one per branch — the
 * allowed constants listed ("must be one of …"), "or null" for a nullable field — rather than
 * "must be equal to constant, must be equal to constant, …, must match a schema in anyOf".
 */
export const schemaErrorFormatter: FastifyServerOptions['schemaErrorFormatter'] = (errors, dataVar) =>
  new Error(formatSchemaErrors(errors, dataVar));

export function formatSchemaErrors(errors: readonly FastifySchemaValidationError[], dataVar: string): string {
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const parts: string[] = [];
  const branches = new Map<string, { allowed: unknown[]; nullable: boolean; others: string[] }>();
  for (const e of errors) {
    if (e.keyword === 'anyOf') continue;
    const path = e.instancePath;
    if (!unions.has(path)) {
      parts.push(`${dataVar}${path} ${e.message}`);
      continue;
    }
    let b = branches.get(path);
    if (!b) {
      b = { allowed: [], nullable: false, others: [] };
      branches.set(path, b);
      parts.push(path); // its place in the message, filled in below
    }
    if (e.keyword === 'const') b.allowed.push((e.params as { allowedValue: unknown }).allowedValue);
    else if (e.keyword === 'type' && (e.params as { type?: unknown }).type === 'null') b.nullable = true;
    else if (e.message) b.others.push(e.message);
  }
  const said = (path: string) => errors.some((e) => e.keyword !== 'anyOf' && e.instancePath.startsWith(`${path}/`));
  const message = parts.flatMap((part) => {
    const b = branches.get(part);
    if (!b) return [part];
    const alternatives = [...b.others];
    if (b.allowed.length > 0) alternatives.push(`must be one of ${b.allowed.map((v) => JSON.stringify(v)).join(', ')}`);
    // A nullable field whose other branch failed deeper down: that deeper error says it.
    if (alternatives.length === 0) return said(part) ? [] : [`${dataVar}${part} must be null`];
    return [`${dataVar}${part} ${alternatives.join(', or ')}${b.nullable ? ', or null' : ''}`];
  });
  return [...new Set(message)].join(', ');
}

/** Broken HTTP framing and late headers, which never reach Fastify's router. */
export function clientErrors(limits: HttpLimits): FastifyServerOptions['clientErrorHandler'] {
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
