// SCIM 2.0 provisioning (issue 22): a tenant's identity provider creates, updates, deactivates
// and removes its users and groups at <public_url>/scim/v2 with a SCIM token that the tenant's
// admins make under /v1/tenant/scim-tokens.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type ScimDeps, scimV2Routes } from './routes.ts';
import { scimTokenRoutes } from './tokens-routes.ts';

export type { ScimDeps } from './routes.ts';

export const scimRoutes: FastifyPluginAsyncTypebox<ScimDeps> = async (app, deps) => {
  await app.register(scimTokenRoutes, deps);
  // Its own context: the SCIM content type, token, error shape and not-found answer stay under /scim/v2.
  await app.register(scimV2Routes, { ...deps, prefix: '/scim/v2' });
};
