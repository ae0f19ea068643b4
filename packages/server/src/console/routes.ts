// The console's pages (DESIGN §7: served at <public_url>/console/): `/` and `/console` redirect
// to /console/; /console/* answers from the built SPA (static-files.ts). Every console answer
// carries a CSP that allows only the console's own origin and no framing, nosniff and a
// same-origin Referrer-Policy.

import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { lookup, notBuiltPage } from './static-files.ts';

/** packages/console/dist of this checkout: where `npm run build -w packages/console` writes. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../../console/dist', import.meta.url));

export const CONSOLE_CSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin');
}

/** What the console's static files need of the server: where the built SPA is. */
export interface ConsoleDeps {
  config: { consoleDir: string | undefined };
}

export const consoleRoutes: FastifyPluginAsync<ConsoleDeps> = async (app, deps) => {
  const dir = deps.config.consoleDir ?? DEFAULT_CONSOLE_DIR;
  const hide = { schema: { hide: true }, config: { cookieless: true } };

  app.get('/', hide, async (_req, reply) => reply.redirect('/console/', 302));
  app.get('/console', hide, async (_req, reply) => reply.redirect('/console/', 301));

  app.get('/console/*', hide, async (req, reply) => {
    securityHeaders(reply);
    const rest = (req.params as { '*': string })['*'];
    const found = await lookup(dir, rest, String(req.headers['accept-encoding'] ?? ''));
    if (found.kind === 'not_built')
      return reply
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(notBuiltPage(dir));
    if (found.kind === 'not_found')
      return reply.code(404).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send('not found\n');
    const f = found.file;
    reply.header('cache-control', f.cacheControl).header('etag', f.etag).header('vary', 'accept-encoding');
    if (req.headers['if-none-match'] === f.etag) {
      f.body.destroy();
      return reply.code(304).send();
    }
    if (f.encoding) reply.header('content-encoding', f.encoding);
    return reply.type(f.contentType).header('content-length', f.size).send(f.body);
  });
};
