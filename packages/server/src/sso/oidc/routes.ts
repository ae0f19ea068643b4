// OpenID Connect single sign-on (DESIGN §6, docs/identity.md):
//   PUT    /v1/tenant/sso            the tenant's provider (admin, audited; discovery read now)
//   GET    /v1/tenant/sso            it, without the client secret, and the redirect URI to register
//   DELETE /v1/tenant/sso            removes it (admin, audited)
//   GET    /v1/auth/oidc/start       ?email= → 302 to the provider's authorization endpoint
//   GET    /v1/auth/oidc/callback    the provider's answer → session cookie, 303 to the console
// Every refusal of the round trip sends the browser back to the console's sign-in page with an
// `sso_error` code it explains; the reason is logged, never a token.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import {
  clearedSsoBindingCookie,
  isSecureUrl,
  requireTenantUser,
  setSessionCookie,
  ssoBindingCookie,
} from '../../auth/index.ts';
import { notFound } from '../../kernel/errors.ts';
import { ErrorResponses } from '../../kernel/route-schemas.ts';
import {
  connectionView,
  finishSignIn,
  type OidcConfig,
  type OidcContext,
  SsoRefused,
  saveConnection,
  startSignIn,
} from './handlers.ts';
import { CallbackQuery, OidcConnection, OidcConnectionChange, SignInStartQuery } from './schemas.ts';

/** The console's sign-in page, telling why single sign-on did not sign the person in. */
export function consoleSignIn(publicUrl: string, ssoError: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/console/?sso_error=${encodeURIComponent(ssoError)}`;
}

const Redirect = Type.Null({ description: 'a redirect (Location)' });

export const oidcRoutes: FastifyPluginAsyncTypebox<OidcContext> = async (app, ctx) => {
  const refusedTo = (reply: FastifyReply, error: unknown, log: typeof app.log) => {
    if (!(error instanceof SsoRefused)) throw error;
    log.warn({ sso_error: error.code, reason: error.message }, 'OIDC sign-in refused');
    return reply.header('cache-control', 'no-store').redirect(consoleSignIn(ctx.auth.publicUrl(), error.code), 302);
  };

  app.put(
    '/v1/tenant/sso',
    {
      config: { scope: 'identity' },
      schema: {
        tags: ['sso'],
        summary:
          "Connect the tenant's OpenID Connect provider (admin; audited). The issuer's discovery document is read " +
          'now (400 invalid_issuer when it cannot be); an email domain routed to another tenant is 409 domain_taken; ' +
          'the client secret is sealed and never returned (omitted, the stored one is kept)',
        body: OidcConnectionChange,
        response: { 200: OidcConnection, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin']);
      const saved = await saveConnection(ctx, user.tenantId, req.body, user);
      req.log.info({ tenantId: user.tenantId, issuer: saved.config.issuer }, 'OIDC connection saved');
      return connectionView(ctx, saved);
    },
  );

  app.get(
    '/v1/tenant/sso',
    {
      config: { scope: 'identity' },
      schema: {
        tags: ['sso'],
        summary: "The tenant's OpenID Connect provider (admin), without its secret, and the redirect URI to register",
        response: { 200: OidcConnection, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const user = requireTenantUser(req, ['admin']);
      const connection = await ctx.connections.find<OidcConfig>(user.tenantId, 'oidc');
      return reply.header('cache-control', 'no-store').send(connectionView(ctx, connection));
    },
  );

  app.delete(
    '/v1/tenant/sso',
    {
      config: { scope: 'identity' },
      schema: {
        tags: ['sso'],
        summary: "Remove the tenant's OpenID Connect provider (admin; audited): its people sign in by password again",
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const user = requireTenantUser(req, ['admin']);
      if (!(await ctx.connections.remove(user.tenantId, 'oidc', user))) throw notFound('OIDC connection');
      req.log.info({ tenantId: user.tenantId }, 'OIDC connection removed');
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/auth/oidc/start',
    {
      config: { cookieless: true, startsFlow: true },
      schema: {
        tags: ['auth'],
        summary:
          "Single sign-on through the email domain's OpenID Connect provider: 302 to its authorization endpoint " +
          '(code flow, PKCE S256, state and nonce); an unknown domain goes back to the console sign-in with sso_error',
        security: [],
        querystring: SignInStartQuery,
        response: { 302: Redirect, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      try {
        const { to, binding } = await startSignIn(ctx, req.query.email);
        return reply
          .header('cache-control', 'no-store')
          .header('set-cookie', ssoBindingCookie(binding, isSecureUrl(ctx.auth.publicUrl())))
          .redirect(to, 302);
      } catch (error) {
        return refusedTo(reply, error, req.log);
      }
    },
  );

  app.get(
    '/v1/auth/oidc/callback',
    {
      config: { cookieless: true },
      schema: {
        tags: ['auth'],
        summary:
          "The provider's answer (the redirect URI): on a verified ID token of an allowed email, the session cookie " +
          'and 303 to the console; any refusal goes back to the console sign-in with sso_error',
        security: [],
        querystring: CallbackQuery,
        response: { 302: Redirect, 303: Redirect, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const publicUrl = ctx.auth.publicUrl();
      const search = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
      const callbackUrl = new URL(`${publicUrl.replace(/\/+$/, '')}/v1/auth/oidc/callback${search}`);
      try {
        const token = await finishSignIn(
          ctx,
          req.query,
          req.headers.cookie,
          callbackUrl,
          { ip: req.ip, userAgent: req.headers['user-agent'] ?? '' },
          req.log,
        );
        return setSessionCookie(reply, publicUrl, token)
          .header('set-cookie', clearedSsoBindingCookie(isSecureUrl(publicUrl)))
          .redirect(`${publicUrl.replace(/\/+$/, '')}/console/`, 303);
      } catch (error) {
        return refusedTo(reply, error, req.log);
      }
    },
  );
};
