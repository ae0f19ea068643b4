// A tenant's SCIM tokens, for its admins (audited):
//   GET    /v1/tenant/scim-tokens        the SCIM base URL and the live tokens (never a token itself)
//   POST   /v1/tenant/scim-tokens        make one {name}: the token (gsc_…) is shown once
//   DELETE /v1/tenant/scim-tokens/{id}   revoke one: the identity provider holding it is refused at once

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { hashSecret, newId, newSecret, requireTenantUser } from '../auth/index.ts';
import { ApiError, notFound } from '../kernel/errors.ts';
import { ErrorResponses, IdParams } from '../kernel/route-schemas.ts';
import type { ScimDeps } from './routes.ts';
import { MAX_SCIM_TOKENS_PER_TENANT, ScimTokensRepository } from './tokens-repository.ts';

const BaseUrl = Type.String({ description: '<public_url>/scim/v2: the SCIM base URL to give the identity provider' });
const ScimTokenView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Type.String(),
  last_used_at: Type.Union([Type.String(), Type.Null()], {
    description: 'the last request it authenticated (written at most once a minute); null: never used',
  }),
});
const ScimTokenList = Type.Object({ base_url: BaseUrl, tokens: Type.Array(ScimTokenView) });
const CreateScimToken = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100, description: 'what holds it, e.g. "Okta"' }) },
  { additionalProperties: false },
);
const CreatedScimToken = Type.Object({
  ...ScimTokenView.properties,
  token: Type.String({ description: 'gsc_…: shown once, never again' }),
  base_url: BaseUrl,
});

export const scimTokenRoutes: FastifyPluginAsyncTypebox<ScimDeps> = async (app, deps) => {
  const tokens = new ScimTokensRepository(deps.db);
  const baseUrl = () => `${deps.publicUrl()}/scim/v2`;

  app.get(
    '/v1/tenant/scim-tokens',
    {
      config: { scope: 'identity' },
      schema: {
        tags: ['tenant'],
        summary: "The SCIM base URL and the tenant's live SCIM tokens, newest first (admin; never a token)",
        response: { 200: ScimTokenList, ...ErrorResponses },
      },
    },
    async (req) => {
      const admin = requireTenantUser(req, ['admin']);
      return { base_url: baseUrl(), tokens: await tokens.list(admin.tenantId) };
    },
  );

  app.post(
    '/v1/tenant/scim-tokens',
    {
      config: { scope: 'identity' },
      schema: {
        tags: ['tenant'],
        summary: `Make a SCIM token for an identity provider (admin; audited): shown once; at most ${MAX_SCIM_TOKENS_PER_TENANT} live (409 too_many_tokens)`,
        body: CreateScimToken,
        response: { 201: CreatedScimToken, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const admin = requireTenantUser(req, ['admin']);
      const token = newSecret('scimToken');
      const row = {
        id: newId('sct'),
        tenant_id: admin.tenantId,
        token_hash: hashSecret(token),
        name: req.body.name,
        created_at: deps.now().toISOString(),
      };
      if (!(await tokens.create(row, admin)))
        throw new ApiError(
          409,
          'too_many_tokens',
          `the tenant holds ${MAX_SCIM_TOKENS_PER_TENANT} live SCIM tokens: revoke one first`,
        );
      return reply.code(201).header('cache-control', 'no-store').send({
        id: row.id,
        name: row.name,
        created_at: row.created_at,
        last_used_at: null,
        token,
        base_url: baseUrl(),
      });
    },
  );

  app.delete(
    '/v1/tenant/scim-tokens/:id',
    {
      config: { scope: 'identity' },
      schema: {
        tags: ['tenant'],
        summary: 'Revoke a SCIM token (admin; audited): requests with it are refused at once',
        params: IdParams,
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const admin = requireTenantUser(req, ['admin']);
      if (!(await tokens.revoke(admin.tenantId, req.params.id, admin, deps.now()))) throw notFound('SCIM token');
      return reply.code(204).send(null);
    },
  );
};
