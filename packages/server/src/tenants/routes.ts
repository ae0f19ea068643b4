// The tenant's settings (docs/guard-server.md):
//   GET   /v1/tenant/settings   admins and members read their tenant's; support staff any tenant's (?tenant_id=)
//   PATCH /v1/tenant/settings   admins change them; every change is written to the audit log
// allow_support_collection: whether vendor support staff may request support bundles from the
// tenant's servers (console push). Off until an admin turns it on; the tenant's admins may
// always request bundles from their own servers.
// require_mfa, sso_only: the tenant's sign-in policy (DESIGN §6; docs/identity.md).
// delivery_retention_days: how many days the tenant's webhook delivery log (attempts and
// completed deliveries) is kept; null goes back to the server's default. At most the server's
// maximum (--delivery-retention-max-days): more is refused (400 retention_above_maximum).
// bundle_retention_days: how many days the tenant's support bundles are kept before the sweep
// deletes them (default 90); null goes back to the default. At most the server's maximum
// (--bundle-retention-max-days): more is refused (400 retention_above_maximum).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { requireTenantUser, requireUser } from '../auth/index.ts';
import type { Db } from '../db/index.ts';
import { ApiError, badRequest, notFound } from '../kernel/errors.ts';
import { ErrorResponses } from '../kernel/route-schemas.ts';
import { type BundleRetentionPolicy, effectiveBundleRetentionDays } from '../support/settings.ts';
import { effectiveRetentionDays, type RetentionPolicy } from '../webhooks/index.ts';
import { hasSsoConnection, type TenantSettings, TenantsRepository } from './tenants-repository.ts';

const Settings = Type.Object({
  allow_support_collection: Type.Boolean({
    description: 'vendor support staff may request support bundles from this tenant’s servers (default false)',
  }),
  require_mfa: Type.Boolean({
    description:
      'users who sign in with a password must hold a second factor (an authenticator app or a passkey); without one they set it up before anything else',
  }),
  sso_only: Type.Boolean({
    description:
      'users sign in through the tenant’s single sign-on; a password works only for admins who hold TOTP (break-glass)',
  }),
  delivery_retention_days: Type.Integer({
    description: 'days this tenant’s webhook delivery log (attempts, completed deliveries) is kept',
  }),
  delivery_retention_is_default: Type.Boolean({
    description: 'the tenant chose nothing: the server’s default applies (and follows it)',
  }),
  delivery_retention_default_days: Type.Integer({ description: 'the server’s default (--delivery-retention-days)' }),
  delivery_retention_max_days: Type.Integer({
    description: 'the most a tenant may choose (--delivery-retention-max-days)',
  }),
  bundle_retention_days: Type.Integer({
    description: 'days this tenant’s support bundles are kept; older ones are deleted (file and findings)',
  }),
  bundle_retention_is_default: Type.Boolean({
    description: 'the tenant chose nothing: the default applies (90 days, or the maximum when that is lower)',
  }),
  bundle_retention_default_days: Type.Integer({ description: 'the default for a tenant that chose nothing' }),
  bundle_retention_max_days: Type.Integer({
    description: 'the most a tenant may choose (--bundle-retention-max-days)',
  }),
});

const SettingsQuery = Type.Object({
  tenant_id: Type.Optional(Type.String({ maxLength: 64, description: 'support staff only: the tenant to read' })),
});

const SettingsChange = Type.Object(
  {
    allow_support_collection: Type.Optional(Type.Boolean()),
    require_mfa: Type.Optional(Type.Boolean()),
    sso_only: Type.Optional(
      Type.Boolean({ description: '409 sso_not_configured until the tenant has an OIDC or SAML connection' }),
    ),
    delivery_retention_days: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 36_500 }), Type.Null()], {
        description: 'days to keep the delivery log, at most delivery_retention_max_days; null: the server default',
      }),
    ),
    bundle_retention_days: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 36_500 }), Type.Null()], {
        description: 'days to keep support bundles, at most bundle_retention_max_days; null: the default',
      }),
    ),
  },
  { additionalProperties: false },
);

/** What the tenant settings need of the server. */
export interface TenantsDeps {
  db: Db;
  now: () => Date;
  config: { deliveryRetention: RetentionPolicy; bundleRetention: BundleRetentionPolicy };
}

export const tenantRoutes: FastifyPluginAsyncTypebox<TenantsDeps> = async (app, deps) => {
  const tenants = new TenantsRepository(deps.db);
  const policy = deps.config.deliveryRetention;
  const bundlePolicy = deps.config.bundleRetention;
  const view = (s: TenantSettings): Static<typeof Settings> => ({
    allow_support_collection: s.allow_support_collection,
    require_mfa: s.require_mfa,
    sso_only: s.sso_only,
    delivery_retention_days: effectiveRetentionDays(s.delivery_retention_days, policy),
    delivery_retention_is_default: s.delivery_retention_days === null,
    delivery_retention_default_days: policy.defaultDays,
    delivery_retention_max_days: policy.maxDays,
    bundle_retention_days: effectiveBundleRetentionDays(s.bundle_retention_days, bundlePolicy),
    bundle_retention_is_default: s.bundle_retention_days === null,
    bundle_retention_default_days: bundlePolicy.defaultDays,
    bundle_retention_max_days: bundlePolicy.maxDays,
  });

  app.get(
    '/v1/tenant/settings',
    {
      config: { scope: 'settings' },
      schema: {
        tags: ['tenant'],
        summary: "The tenant's settings (admins and members their own; support staff name the tenant)",
        querystring: SettingsQuery,
        response: { 200: Settings, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member', 'support']);
      const tenantId = user.role === 'support' ? req.query.tenant_id : user.tenantId;
      if (!tenantId) throw badRequest('support staff name the tenant: ?tenant_id=');
      const settings = await tenants.settings(tenantId);
      if (!settings) throw notFound('tenant');
      return view(settings);
    },
  );

  app.patch(
    '/v1/tenant/settings',
    {
      config: { scope: 'settings' },
      schema: {
        tags: ['tenant'],
        summary: "Change the tenant's settings (admin; audited)",
        body: SettingsChange,
        response: { 200: Settings, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin']);
      const days = req.body.delivery_retention_days;
      if (days != null && days > policy.maxDays)
        throw badRequest(
          `delivery_retention_days may be at most ${policy.maxDays} on this server (--delivery-retention-max-days)`,
          'retention_above_maximum',
        );
      const bundleDays = req.body.bundle_retention_days;
      if (bundleDays != null && bundleDays > bundlePolicy.maxDays)
        throw badRequest(
          `bundle_retention_days may be at most ${bundlePolicy.maxDays} on this server (--bundle-retention-max-days)`,
          'retention_above_maximum',
        );
      // The sign-in policy is identity (auth/scopes.ts): no scoped token may loosen it.
      if ((req.body.require_mfa !== undefined || req.body.sso_only !== undefined) && user.scopes !== undefined)
        throw new ApiError(
          403,
          'insufficient_scope',
          'the sign-in policy (require_mfa, sso_only) is changed with full access only: use the console or a token without scopes',
        );
      if (req.body.sso_only === true && !(await hasSsoConnection(deps.db, user.tenantId)))
        throw new ApiError(
          409,
          'sso_not_configured',
          'connect an identity provider (Settings > Single sign-on) before requiring single sign-on',
        );
      const settings = await tenants.update(user.tenantId, req.body, { actor: user, at: deps.now() });
      if (!settings) throw notFound('tenant');
      req.log.info({ tenantId: user.tenantId, ...req.body }, 'tenant settings changed');
      return view(settings);
    },
  );
};
