// SAML 2.0 single sign-on (docs/identity.md, "Single sign-on with SAML"):
//   GET    /v1/tenant/saml          the tenant's connection and the SP facts to give the IdP (admin)
//   PUT    /v1/tenant/saml          configure it (admin; audited saml.update)
//   DELETE /v1/tenant/saml          remove it (admin; audited saml.delete)
//   GET    /v1/auth/saml/metadata   the SP metadata XML (the SP entity ID is this URL)
//   GET    /v1/auth/saml/start      ?email= → 302 to the IdP with an AuthnRequest
//   POST   /v1/auth/saml/acs        the IdP's form post (SAMLResponse) → session cookie, 303 to the console
// The ACS is a cross-site form post by design: no CSRF check and no cookie read there; the
// signed assertion and the single-use request it answers are the proof. Every refusal sends
// the browser back to the console's sign-in with ?sso_error=<code>; the reason is logged.

import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import { Type } from 'typebox';
import {
  type AuthRoutesDeps,
  clearedSsoBindingCookie,
  isSecureUrl,
  openSession,
  requireTenantUser,
  setSessionCookie,
  signInContext,
  ssoBindingCookie,
  ssoBindingMatches,
} from '../../auth/index.ts';
import { ApiError, notFound } from '../../kernel/errors.ts';
import { ErrorResponses } from '../../kernel/route-schemas.ts';
import { checkCertificates, checkDomains, checkSsoUrl, describeCertificate } from './connection-input.ts';
import { type SamlConnection, SamlConnections } from './connections-repository.ts';
import { SamlAcsBody, SamlConnectionChange, SamlConnectionView, SamlStartQuery } from './schemas.ts';
import { serviceProvider, serviceProviderMetadata } from './service-provider.ts';
import { consumeSamlResponse, SAML_RESPONSE_MAX_CHARS, SamlRefused, startSamlSignIn } from './sign-in.ts';

/** The ACS form body: a SAMLResponse and a RelayState, form-encoded, with room for the encoding. */
const ACS_BODY_MAX_BYTES = SAML_RESPONSE_MAX_CHARS * 3 + 4096;

const Redirect = Type.Null({ description: 'a redirect (Location)' });

export const samlRoutes: FastifyPluginAsyncTypebox<AuthRoutesDeps> = async (app, deps) => {
  const ctx = signInContext(deps);
  const connections = new SamlConnections(deps.db);
  const signIn = { db: deps.db, now: deps.now, publicUrl: deps.publicUrl, flows: ctx.flows, connections };
  const consoleUrl = () => `${deps.publicUrl()}/console/`;
  const refusedUrl = (code: string) => `${consoleUrl()}?sso_error=${encodeURIComponent(code)}`;

  const view = (c: SamlConnection | undefined): Static<typeof SamlConnectionView> => ({
    service_provider: serviceProvider(deps.publicUrl()),
    connection: c
      ? {
          idp_entity_id: c.idp_entity_id,
          sso_url: c.sso_url,
          idp_certificates: c.idp_certificates.map((pem) => ({ pem, ...describeCertificate(pem) })),
          email_domains: c.emailDomains,
          admin_group: c.adminGroup,
          email_attribute: c.email_attribute,
          groups_attribute: c.groups_attribute,
          updated_at: c.updatedAt,
        }
      : null,
  });

  app.get(
    '/v1/tenant/saml',
    {
      config: { scope: 'identity' },
      schema: {
        tags: ['sso'],
        summary: "The tenant's SAML identity provider (null until configured) and the SP facts to give it (admin)",
        response: { 200: SamlConnectionView, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin']);
      return view(await connections.ofTenant(user.tenantId));
    },
  );

  app.put(
    '/v1/tenant/saml',
    {
      config: { scope: 'identity' },
      schema: {
        tags: ['sso'],
        summary:
          "Configure the tenant's SAML identity provider (admin; audited). 400 invalid_sso_url, invalid_certificate, " +
          'invalid_domain; 409 domain_taken when an email domain signs in elsewhere',
        body: SamlConnectionChange,
        response: { 200: SamlConnectionView, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin']);
      const b = req.body;
      await connections.save(
        user.tenantId,
        {
          idp_entity_id: b.idp_entity_id.trim(),
          sso_url: checkSsoUrl(b.sso_url.trim()),
          idp_certificates: checkCertificates(b.idp_certificates),
          email_attribute: b.email_attribute ?? null,
          groups_attribute: b.groups_attribute ?? null,
          emailDomains: checkDomains(b.email_domains),
          adminGroup: b.admin_group ?? null,
        },
        { actor: user, at: deps.now() },
      );
      req.log.info({ tenantId: user.tenantId, idp: b.idp_entity_id }, 'SAML connection saved');
      return view(await connections.ofTenant(user.tenantId));
    },
  );

  app.delete(
    '/v1/tenant/saml',
    {
      config: { scope: 'identity' },
      schema: {
        tags: ['sso'],
        summary: "Remove the tenant's SAML identity provider (admin; audited); its users keep their accounts",
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const user = requireTenantUser(req, ['admin']);
      if (!(await connections.remove(user.tenantId, { actor: user, at: deps.now() })))
        throw notFound('SAML connection');
      req.log.info({ tenantId: user.tenantId }, 'SAML connection removed');
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/auth/saml/metadata',
    {
      config: { cookieless: true },
      schema: {
        tags: ['sso'],
        summary: "Guard's SAML service provider metadata (XML): entity ID, ACS URL, NameID format",
        security: [],
        produces: ['application/samlmetadata+xml'],
        response: { 200: Type.String({ description: 'SAML metadata XML' }) },
      },
    },
    async (_req, reply) =>
      reply.type('application/samlmetadata+xml; charset=utf-8').send(serviceProviderMetadata(deps.publicUrl())),
  );

  app.get(
    '/v1/auth/saml/start',
    {
      config: { cookieless: true, startsFlow: true },
      schema: {
        tags: ['sso'],
        summary:
          "Start a SAML sign-in: 302 to the IdP of the email's domain with an AuthnRequest; " +
          'with no SAML connection for it, 302 to the console with ?sso_error=sso_not_configured',
        security: [],
        querystring: SamlStartQuery,
        response: { 302: Redirect, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      try {
        const { to, binding } = await startSamlSignIn(signIn, req.query.email);
        return reply
          .header('cache-control', 'no-store')
          .header('set-cookie', ssoBindingCookie(binding, isSecureUrl(deps.publicUrl())))
          .redirect(to, 302);
      } catch (error) {
        if (!(error instanceof SamlRefused)) throw error;
        req.log.info({ code: error.code, reason: error.message }, 'SAML sign-in not started');
        return reply.redirect(refusedUrl(error.code), 302);
      }
    },
  );

  // The IdP's form post: its own scope, so only it parses form bodies (at most ACS_BODY_MAX_BYTES).
  await app.register(async (scope) => {
    const acs = scope.withTypeProvider<TypeBoxTypeProvider>();
    acs.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: ACS_BODY_MAX_BYTES },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    acs.post(
      '/v1/auth/saml/acs',
      {
        config: { cookieless: true },
        schema: {
          tags: ['sso'],
          summary:
            "The SAML Assertion Consumer Service (HTTP-POST binding): the IdP's signed response checked → 303 to " +
            '/v1/auth/saml/finish, which opens the session in the browser that started the sign-in; any refusal → ' +
            '303 to the console with ?sso_error=<code>',
          security: [],
          consumes: ['application/x-www-form-urlencoded'],
          body: SamlAcsBody,
          response: { 303: Redirect, ...ErrorResponses },
        },
      },
      async (req, reply) => {
        reply.header('cache-control', 'no-store');
        try {
          const { member, bindingHash } = await consumeSamlResponse(signIn, req.body.SAMLResponse);
          // The POST came from the IdP's page (cross-site: SameSite cookies stay behind), so the
          // browser is sent on to a GET of our own, which brings its guard_sso cookie back.
          const key = await ctx.flows.start('sso_finish', {
            tenantId: member.tenant_id,
            userId: member.id,
            data: { binding_hash: bindingHash, created: member.created },
            ttlMs: FINISH_TTL_MS,
          });
          return reply.redirect(
            `${deps.publicUrl().replace(/\/+$/, '')}/v1/auth/saml/finish?key=${encodeURIComponent(key)}`,
            303,
          );
        } catch (error) {
          // An ApiError here: the account changed (or was deactivated) while signing in.
          if (!(error instanceof SamlRefused || error instanceof ApiError)) throw error;
          req.log.warn({ code: error.code, reason: error.message }, 'SAML sign-in refused');
          return reply.redirect(refusedUrl(error.code), 303);
        }
      },
    );
  });

  app.get(
    '/v1/auth/saml/finish',
    {
      config: { cookieless: true },
      schema: {
        tags: ['sso'],
        summary:
          'The end of a SAML sign-in: the verified answer (once, 2 minutes) opens the session only in the browser ' +
          'that started it (its guard_sso cookie); then 303 to the console. Otherwise 303 to the console with ' +
          '?sso_error=<code>',
        security: [],
        querystring: SamlFinishQuery,
        response: { 303: Redirect, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      try {
        const flow = await ctx.flows.take<{ binding_hash: string; created: boolean }>('sso_finish', req.query.key);
        if (!flow?.userId) throw new SamlRefused('unknown_request', 'no live SAML sign-in to finish with this key');
        if (!ssoBindingMatches(req.headers.cookie, flow.data.binding_hash))
          throw new SamlRefused(
            'other_browser',
            'the sign-in was not started in this browser (no or another guard_sso cookie)',
          );
        const account = await ctx.credentials.accountById(flow.userId);
        if (!account) throw new SamlRefused('unknown_request', 'the user is gone');
        const { token } = await openSession(
          ctx,
          account,
          { ip: req.ip, userAgent: req.headers['user-agent'] ?? '' },
          'saml',
        );
        req.log.info({ tenantId: account.tenant_id, userId: account.id, created: flow.data.created }, 'SAML sign-in');
        return setSessionCookie(reply, deps.publicUrl(), token)
          .header('set-cookie', clearedSsoBindingCookie(isSecureUrl(deps.publicUrl())))
          .redirect(consoleUrl(), 303);
      } catch (error) {
        if (!(error instanceof SamlRefused || error instanceof ApiError)) throw error;
        req.log.warn({ code: error.code, reason: error.message }, 'SAML sign-in refused');
        return reply.redirect(refusedUrl(error.code), 303);
      }
    },
  );
};

/** A verified answer waits this long for its browser (the IdP's page posts it at once). */
const FINISH_TTL_MS = 2 * 60_000;

const SamlFinishQuery = Type.Object({ key: Type.String({ minLength: 1, maxLength: 100 }) });
