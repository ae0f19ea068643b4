// Single sign-on's routes: each protocol's own (oidc/, saml/), and the dispatcher the console's
// "Sign in with SSO" opens:
//   GET /v1/auth/sso/start?email=   → the start of the email domain's protocol (OIDC or SAML)

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { type SignInDeps, signInContext } from '../auth/index.ts';
import { ErrorResponses } from '../kernel/route-schemas.ts';
import { SsoConnections } from './connections.ts';
import { emailDomain } from './oidc/claims.ts';
import type { OidcContext } from './oidc/handlers.ts';
import { ProviderConfigurations } from './oidc/provider.ts';
import { consoleSignIn, oidcRoutes } from './oidc/routes.ts';
import { SignInStartQuery } from './oidc/schemas.ts';
import { samlRoutes } from './saml/routes.ts';

/** What single sign-on needs of the server: what any sign-in needs. */
export type SsoDeps = SignInDeps;

export const ssoRoutes: FastifyPluginAsyncTypebox<SsoDeps> = async (app, deps) => {
  const connections = new SsoConnections(deps.db, deps.now);
  const oidc: OidcContext = {
    db: deps.db,
    auth: signInContext(deps),
    connections,
    secretKey: deps.masterKey.derive('sso'),
    providers: new ProviderConfigurations(deps.now),
  };
  await app.register(oidcRoutes, oidc);
  await app.register(samlRoutes, deps);

  app.get(
    '/v1/auth/sso/start',
    {
      config: { cookieless: true },
      schema: {
        tags: ['auth'],
        summary:
          "Single sign-on by work email: 302 to the start of the email domain's protocol (/v1/auth/oidc/start or " +
          '/v1/auth/saml/start); an unknown domain goes back to the console sign-in with sso_error=unknown_domain',
        security: [],
        querystring: SignInStartQuery,
        response: { 302: Type.Null({ description: 'a redirect (Location)' }), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const publicUrl = deps.publicUrl().replace(/\/+$/, '');
      const email = req.query.email.trim();
      const domain = emailDomain(email);
      const route = domain ? await connections.route(domain) : undefined;
      reply.header('cache-control', 'no-store');
      if (!route) {
        req.log.warn({ sso_error: domain ? 'unknown_domain' : 'invalid_email' }, 'single sign-on refused');
        return reply.redirect(consoleSignIn(publicUrl, domain ? 'unknown_domain' : 'invalid_email'), 302);
      }
      return reply.redirect(`${publicUrl}/v1/auth/${route.protocol}/start?email=${encodeURIComponent(email)}`, 302);
    },
  );
};
