// The tenant's settings (docs/guard-server.md):
//   GET   /v1/tenant/settings   admins and members read their tenant's; support staff any tenant's (?tenant_id=)
//   PATCH /v1/tenant/settings   admins change them; every change is written to the audit log
// allow_support_collection: whether vendor support staff may request support bundles from the
// tenant's servers (console push). Off until an admin turns it on; the tenant's admins may
// always request bundles from their own servers.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireTenantUser, requireUser } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { badRequest, notFound } from '../errors.ts';
import { ErrorResponses } from '../route-schemas.ts';
import { TenantsRepository } from './tenants-repository.ts';

const Settings = Type.Object({
  allow_support_collection: Type.Boolean({
    description: 'vendor support staff may request support bundles from this tenant’s servers (default false)',
  }),
});

const SettingsQuery = Type.Object({
  tenant_id: Type.Optional(Type.String({ maxLength: 64, description: 'support staff only: the tenant to read' })),
});

const SettingsChange = Type.Object(
  { allow_support_collection: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const tenantRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, deps) => {
  const tenants = new TenantsRepository(deps.db);

  app.get(
    '/v1/tenant/settings',
    {
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
      return settings;
    },
  );

  app.patch(
    '/v1/tenant/settings',
    {
      schema: {
        tags: ['tenant'],
        summary: "Change the tenant's settings (admin; audited)",
        body: SettingsChange,
        response: { 200: Settings, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin']);
      const settings = await tenants.update(user.tenantId, req.body, { actor: user, at: deps.now() });
      if (!settings) throw notFound('tenant');
      req.log.info({ tenantId: user.tenantId, ...req.body }, 'tenant settings changed');
      return settings;
    },
  );
};
