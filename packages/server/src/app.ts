// The whole architecture in registration order: infrastructure (logging, errors, OpenAPI,
// auth), then capabilities' routes. Reading this file shows everything the server does.

import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import { agentRoutes } from './agents/routes.ts';
import { resolvePrincipal } from './auth/principal.ts';
import type { AppDeps } from './deps.ts';
import { enrollmentRoutes } from './enrollment/routes.ts';
import { ApiError } from './errors.ts';
import { healthRoutes } from './health.ts';
import { answerAndClose, bodyDeadline, listenerTimeouts } from './http-limits.ts';
import { objectRoutes } from './objects/routes.ts';
import { signalRoutes } from './signals/routes.ts';
import { supportRoutes } from './support/routes.ts';
import { SERVER_VERSION } from './version.ts';
import { webhookRoutes } from './webhooks/routes.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** JSON bodies are small (a manifest is the largest); objects stream through their own route. */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;
/** In-flight requests get this long to finish after SIGTERM; then connections are cut. */
export const SHUTDOWN_GRACE_MS = 20_000;

function ajvWithFormats(options: { coerceTypes: boolean | 'array' }): Ajv {
  const ajv = new Ajv({ ...options, removeAdditional: false, useDefaults: true, allErrors: false, strict: false });
  addFormats(ajv);
  return ajv;
}

export async function buildApp(deps: AppDeps, options: { logger: FastifyBaseLogger }): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: JSON_BODY_LIMIT_BYTES,
    // Header, body and keep-alive timeouts of slow peers (http-limits.ts).
    ...listenerTimeouts(deps.config.limits),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Errors Fastify raises before routing (a bad percent-escape, an over-long parameter)
    // get the API's error shape too.
    frameworkErrors: (error, _req, reply) => {
      const status = (error as FastifyError).statusCode ?? 400;
      (reply as unknown as { code(n: number): { send(b: unknown): void } })
        .code(status)
        .send({ error: { code: status === 414 ? 'uri_too_long' : 'invalid_request', message: error.message } });
    },
    // Broken HTTP framing and late headers never reach Fastify's router: answer in the same shape.
    clientErrorHandler: (error, socket) => {
      if ((error as NodeJS.ErrnoException).code === 'ERR_HTTP_REQUEST_TIMEOUT')
        return answerAndClose(
          socket,
          408,
          'Request Timeout',
          'request_timeout',
          `the request headers did not arrive within ${deps.config.limits.headerTimeoutMs / 1000} s`,
        );
      if (!socket.writable) return socket.destroy(error);
      answerAndClose(socket, 400, 'Bad Request', 'bad_request', 'malformed HTTP request');
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Request bodies are validated strictly ("3" is not a severity); query strings and path
  // parameters arrive as text, so only they are coerced to the schema's types.
  const strict = ajvWithFormats({ coerceTypes: false });
  const coercing = ajvWithFormats({ coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));

  // Graceful shutdown: once closing, every response says `Connection: close` and idle
  // keep-alive connections are closed as they become idle, so in-flight requests finish
  // and nothing holds the process for the keep-alive timeout.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
    sweep.unref();
    const deadline = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    deadline.unref();
    app.server.once('close', () => {
      clearInterval(sweep);
      clearTimeout(deadline);
    });
  });
  app.addHook('onSend', async (_req, reply) => {
    if (closing) reply.header('connection', 'close');
  });

  // --- infrastructure ---------------------------------------------------------------
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
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-guard-server', SERVER_VERSION);
    req.principal = undefined;
  });
  bodyDeadline(app, deps.config.limits);
  app.addHook('preHandler', async (req) => {
    req.principal = await resolvePrincipal(deps.db, req.headers.authorization);
  });

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Guard API',
        version: SERVER_VERSION,
        description: 'guard-server /v1 API. Errors are {"error": {"code", "message"}}.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'agent API key (gak_…) or user API token (gut_…)' },
        },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  // --- capabilities -----------------------------------------------------------------
  await app.register(healthRoutes, deps);
  await app.register(enrollmentRoutes, deps);
  await app.register(agentRoutes, deps);
  await app.register(supportRoutes, deps);
  const withWake = { ...deps, wakeDeliveries: deps.webhooks.wake };
  await app.register(signalRoutes, withWake);
  await app.register(webhookRoutes, withWake);
  await app.register(objectRoutes, deps); // its own content-type parser: raw streamed bodies
  // /metrics is not here: it has its own listener (metrics-listener.ts, --metrics-listen).
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
