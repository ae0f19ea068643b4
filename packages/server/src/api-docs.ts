// The API's own description: the OpenAPI document of every route registered after this (each
// declares its full schema) at /openapi.json, and a browsable view of it at /docs.

import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { SERVER_VERSION } from './version.ts';

export async function apiDocs(app: FastifyInstance): Promise<void> {
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
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'guard_session',
            description:
              'console session (POST /v1/auth/login); writes also need X-CSRF-Token and a same-origin Origin (docs/console.md)',
          },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
