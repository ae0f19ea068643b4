// The API's own description: the OpenAPI document of every route registered after this (each
// declares its full schema) at /openapi.json, and a browsable view of it at /docs. /docs shares
// the console's origin, so every answer under it carries the console's kind of defences: a CSP
// that allows only this origin (Swagger UI has no inline script, one inline style) and no framing,
// nosniff and a same-origin Referrer-Policy. OpenAPI 3.1, so that the document also describes
// the requests Guard sends to webhook endpoints (`webhooks`, from the contract's event catalog).

import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { openApiWebhooks } from '@guard/contract/webhook-events';
import type { FastifyInstance } from 'fastify';
import { SERVER_VERSION } from './version.ts';

/** The hash is of the one <style> element Swagger UI inserts (a test in Chromium sees any other). */
export const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; img-src 'self' data:; font-src 'self' data:; object-src 'none'; " +
  "script-src 'self'; script-src-attr 'none'; style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='; " +
  "frame-ancestors 'none'; form-action 'self'";

export async function apiDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
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
      // Plain JSON; the plugin types it with openapi-types' path items, which it fits.
      webhooks: openApiWebhooks() as Record<string, never>,
    },
  });
  await app.register(async (docs) => {
    docs.addHook('onSend', async (_req, reply) => {
      reply
        .header('content-security-policy', DOCS_CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'same-origin');
    });
    await docs.register(swaggerUi, { routePrefix: '/docs' });
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
