// SCIM 2.0 provisioning (RFC 7643, RFC 7644 core) at <public_url>/scim/v2, for a tenant's
// identity provider (Okta, Microsoft Entra ID…):
//   GET    /ServiceProviderConfig, /ResourceTypes[/{id}], /Schemas[/{id}]   what the service supports
//   GET    /Users?filter=userName eq "…"&startIndex&count    list (also externalId eq, emails.value eq)
//   POST   /Users                                            provision (no password: SSO sign-in)
//   GET|PUT|PATCH|DELETE /Users/{id}                         read, replace, patch (active: false
//                                                            deprovisions), delete
//   GET    /Groups?filter=displayName eq "…"                 list
//   POST   /Groups, GET|PUT|PATCH|DELETE /Groups/{id}        membership → role (directory-repository.ts)
// Authenticated by a tenant's SCIM token alone (`Authorization: Bearer gsc_…`), resolved here:
// the API's principal resolution knows no gsc_ token (so it opens nothing under /v1), and a
// user's token or session opens nothing here. Every query is scoped by the token's tenant and
// every change audited as `scim:<token id>`. Answers are application/scim+json; bodies may be
// application/scim+json or application/json, within the API's JSON body limit; errors are
// SCIM's error body (protocol.ts). These routes follow RFC 7644 rather than Guard's API
// conventions, so they are left out of the OpenAPI document (docs/identity.md describes them).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AuditActor } from '../audit/index.ts';
import { hashSecret } from '../auth/index.ts';
import type { Db } from '../db/index.ts';
import { ApiError, isUnreachable, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../kernel/errors.ts';
import { JSON_BODY_LIMIT_BYTES } from '../kernel/fastify-options.ts';
import { type ChangeBy, DirectoryRepository } from './directory-repository.ts';
import { resourceTypes, schemas, serviceProviderConfig } from './discovery.ts';
import { parseEqFilter } from './filter.ts';
import { type PatchOperation, patchGroup, patchUser } from './patch.ts';
import { errorBody, listResponse, paging, SCIM_MEDIA_TYPE, ScimError, scimNotFound } from './protocol.ts';
import { groupFromBody, groupResource, userFromBody, userResource } from './resources.ts';
import { ScimTokensRepository } from './tokens-repository.ts';

export interface ScimDeps {
  db: Db;
  now: () => Date;
  publicUrl: () => string;
}

/** The token a request came with: its id (the audit actor) and its tenant (every query's scope). */
interface ScimCaller {
  tokenId: string;
  tenantId: string;
}

const SCIM_TOKEN = /^Bearer (gsc_[A-Za-z0-9_-]{10,200})$/;

const Id = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const ListQuery = Type.Object({
  filter: Type.Optional(Type.String({ maxLength: 1024 })),
  startIndex: Type.Optional(Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 })),
  count: Type.Optional(Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 })),
  attributes: Type.Optional(Type.String({ maxLength: 1024 })),
  excludedAttributes: Type.Optional(Type.String({ maxLength: 1024 })),
});
const ReadQuery = Type.Pick(ListQuery, ['attributes', 'excludedAttributes']);
/**
 * A resource body: an object of at most 64 attributes. What Guard keeps of it is validated by
 * resources.ts and patch.ts; the rest (a provider's extensions) is ignored.
 */
const ResourceBody = Type.Record(Type.String(), Type.Unknown(), { maxProperties: 64 });
const PatchBody = Type.Object(
  {
    schemas: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 8 })),
    Operations: Type.Array(
      Type.Object(
        {
          op: Type.String({ minLength: 1, maxLength: 16 }),
          path: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
          value: Type.Optional(Type.Unknown()),
        },
        { additionalProperties: true },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  { additionalProperties: true },
);

const hidden = { hide: true } as const;

export const scimV2Routes: FastifyPluginAsyncTypebox<ScimDeps> = async (app, deps) => {
  const tokens = new ScimTokensRepository(deps.db);
  const directory = new DirectoryRepository(deps.db);
  const callers = new WeakMap<FastifyRequest, ScimCaller>();
  const base = () => `${deps.publicUrl()}/scim/v2`;

  const callerOf = (req: FastifyRequest): ScimCaller => {
    const caller = callers.get(req);
    if (!caller) throw new ScimError(401, 'a SCIM token is required'); // the hook below ran for every route
    return caller;
  };
  const by = (req: FastifyRequest): ChangeBy => {
    const actor: AuditActor = { userId: `scim:${callerOf(req).tokenId}`, role: 'scim' };
    return { actor, at: deps.now() };
  };
  const send = (reply: FastifyReply, status: number, body: unknown) =>
    reply.code(status).type(SCIM_MEDIA_TYPE).header('cache-control', 'no-store').send(body);

  // Bodies of either JSON media type, parsed by Fastify's own JSON parser (prototype poisoning
  // refused) within the API's JSON body limit; any other media type is 415.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(
    SCIM_MEDIA_TYPE,
    { parseAs: 'string', bodyLimit: JSON_BODY_LIMIT_BYTES },
    app.getDefaultJsonParser('error', 'error'),
  );

  // The SCIM token, before the body is read: nothing else authenticates here.
  app.addHook('onRequest', async (req) => {
    const m = SCIM_TOKEN.exec(req.headers.authorization ?? '');
    if (!m) throw new ScimError(401, 'this endpoint takes a SCIM token: Authorization: Bearer gsc_…');
    const token = await tokens.use(hashSecret(m[1]), deps.now());
    if (!token) throw new ScimError(401, 'the SCIM token is unknown or was revoked');
    callers.set(req, { tokenId: token.id, tenantId: token.tenantId });
  });

  app.setErrorHandler((error: FastifyError | ApiError | ScimError, req, reply) => {
    if (error instanceof ScimError) {
      if (error.status === 401) reply.header('www-authenticate', 'Bearer realm="guard-scim"');
      return send(reply, error.status, errorBody(error.status, error.message, error.scimType));
    }
    if (error instanceof ApiError) return send(reply, error.status, errorBody(error.status, error.message));
    if ((error as FastifyError).validation) return send(reply, 400, errorBody(400, error.message, 'invalidValue'));
    const status = (error as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) {
      const code = (error as FastifyError).code;
      const syntax =
        code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
        code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
        error instanceof SyntaxError;
      return send(reply, status, errorBody(status, error.message, syntax ? 'invalidSyntax' : undefined));
    }
    if (isUnreachable(error)) {
      req.log.warn({ err: error }, 'the database cannot be reached');
      reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      return send(reply, 503, errorBody(503, 'the service cannot reach its database right now; retry shortly'));
    }
    req.log.error({ err: error }, 'unhandled error');
    return send(reply, 500, errorBody(500, 'internal server error'));
  });
  app.setNotFoundHandler((req, reply) =>
    send(reply, 404, errorBody(404, `no SCIM endpoint ${req.method} ${req.url.split('?')[0]}`)),
  );

  // Every route: no session cookie is read (a SCIM token only), and no OpenAPI entry.
  const route = { config: { cookieless: true } } as const;

  // --- discovery -----------------------------------------------------------------------

  app.get('/ServiceProviderConfig', { ...route, schema: hidden }, async (_req, reply) =>
    send(reply, 200, serviceProviderConfig(base())),
  );
  app.get('/ResourceTypes', { ...route, schema: hidden }, async (_req, reply) => {
    const all = resourceTypes(base());
    return send(reply, 200, listResponse(all, all.length, { startIndex: 1, count: all.length }));
  });
  app.get('/ResourceTypes/:id', { ...route, schema: { ...hidden, params: Id } }, async (req, reply) => {
    const found = resourceTypes(base()).find((t) => t.id === req.params.id);
    if (!found) throw scimNotFound('ResourceType', req.params.id);
    return send(reply, 200, found);
  });
  app.get('/Schemas', { ...route, schema: hidden }, async (_req, reply) => {
    const all = schemas(base());
    return send(reply, 200, listResponse(all, all.length, { startIndex: 1, count: all.length }));
  });
  app.get(
    '/Schemas/:id',
    { ...route, schema: { ...hidden, params: Type.Object({ id: Type.String({ maxLength: 128 }) }) } },
    async (req, reply) => {
      const found = schemas(base()).find((s) => s.id === req.params.id);
      if (!found) throw scimNotFound('Schema', req.params.id);
      return send(reply, 200, found);
    },
  );

  // --- users ---------------------------------------------------------------------------

  app.get('/Users', { ...route, schema: { ...hidden, querystring: ListQuery } }, async (req, reply) => {
    const { tenantId } = callerOf(req);
    const filter =
      req.query.filter === undefined
        ? undefined
        : parseEqFilter(req.query.filter, ['userName', 'externalId', 'emails.value'] as const);
    const page = paging(req.query);
    const { users, total } = await directory.listUsers(tenantId, filter, page);
    return send(
      reply,
      200,
      listResponse(
        users.map((u) => userResource(u, base())),
        total,
        page,
      ),
    );
  });

  app.post('/Users', { ...route, schema: { ...hidden, body: ResourceBody } }, async (req, reply) => {
    const user = await directory.createUser(callerOf(req).tenantId, userFromBody(req.body), by(req));
    const resource = userResource(user, base());
    return send(reply.header('location', resource.meta.location), 201, resource);
  });

  app.get('/Users/:id', { ...route, schema: { ...hidden, params: Id, querystring: ReadQuery } }, async (req, reply) =>
    send(reply, 200, userResource(await directory.findUser(callerOf(req).tenantId, req.params.id), base())),
  );

  app.put('/Users/:id', { ...route, schema: { ...hidden, params: Id, body: ResourceBody } }, async (req, reply) => {
    const after = userFromBody(req.body);
    const user = await directory.changeUser(callerOf(req).tenantId, req.params.id, () => after, by(req));
    return send(reply, 200, userResource(user, base()));
  });

  app.patch('/Users/:id', { ...route, schema: { ...hidden, params: Id, body: PatchBody } }, async (req, reply) => {
    const operations = req.body.Operations as PatchOperation[];
    const user = await directory.changeUser(
      callerOf(req).tenantId,
      req.params.id,
      (before) => patchUser(before, operations),
      by(req),
    );
    return send(reply, 200, userResource(user, base()));
  });

  app.delete('/Users/:id', { ...route, schema: { ...hidden, params: Id } }, async (req, reply) => {
    await directory.deleteUser(callerOf(req).tenantId, req.params.id, by(req));
    return reply.code(204).send();
  });

  // --- groups --------------------------------------------------------------------------

  const withMembers = (query: { excludedAttributes?: string; attributes?: string }) =>
    !(query.excludedAttributes ?? '')
      .split(',')
      .map((a) => a.trim().toLowerCase())
      .includes('members');

  app.get('/Groups', { ...route, schema: { ...hidden, querystring: ListQuery } }, async (req, reply) => {
    const { tenantId } = callerOf(req);
    const filter =
      req.query.filter === undefined
        ? undefined
        : parseEqFilter(req.query.filter, ['displayName', 'externalId'] as const);
    const page = paging(req.query);
    const { groups, total } = await directory.listGroups(tenantId, filter, page, withMembers(req.query));
    return send(
      reply,
      200,
      listResponse(
        groups.map((g) => groupResource(g, base())),
        total,
        page,
      ),
    );
  });

  app.post('/Groups', { ...route, schema: { ...hidden, body: ResourceBody } }, async (req, reply) => {
    const group = await directory.createGroup(callerOf(req).tenantId, groupFromBody(req.body), by(req));
    const resource = groupResource(group, base());
    return send(reply.header('location', resource.meta.location), 201, resource);
  });

  app.get(
    '/Groups/:id',
    { ...route, schema: { ...hidden, params: Id, querystring: ReadQuery } },
    async (req, reply) => {
      const group = await directory.findGroup(callerOf(req).tenantId, req.params.id);
      if (!withMembers(req.query)) delete group.members;
      return send(reply, 200, groupResource(group, base()));
    },
  );

  app.put('/Groups/:id', { ...route, schema: { ...hidden, params: Id, body: ResourceBody } }, async (req, reply) => {
    const after = groupFromBody(req.body);
    const group = await directory.changeGroup(callerOf(req).tenantId, req.params.id, () => after, by(req));
    return send(reply, 200, groupResource(group, base()));
  });

  app.patch('/Groups/:id', { ...route, schema: { ...hidden, params: Id, body: PatchBody } }, async (req, reply) => {
    const operations = req.body.Operations as PatchOperation[];
    const group = await directory.changeGroup(
      callerOf(req).tenantId,
      req.params.id,
      (before) => patchGroup(before, operations),
      by(req),
    );
    return send(reply, 200, groupResource(group, base()));
  });

  app.delete('/Groups/:id', { ...route, schema: { ...hidden, params: Id } }, async (req, reply) => {
    await directory.deleteGroup(callerOf(req).tenantId, req.params.id, by(req));
    return reply.code(204).send();
  });
};
