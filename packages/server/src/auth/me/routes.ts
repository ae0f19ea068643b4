// The signed-in user's own account (any role; bearer token or session):
//   GET    /v1/me/sessions        live sessions, the current one marked
//   DELETE /v1/me/sessions/{id}   revoke one (the current one: the cookie is cleared too)
//   POST   /v1/me/password        change the password; the other sessions end
//   GET    /v1/me/tokens          personal API tokens (never the token)
//   POST   /v1/me/tokens          create one (scopes, expiry): the token is shown once
// Writes here need a full-access credential: no token scope grants `account:write` (scopes.ts).
//   DELETE /v1/me/tokens/{id}     revoke one

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ErrorResponses, IdParams } from '../../kernel/route-schemas.ts';
import type { AuthContext } from '../context.ts';
import { endSessionCookie, requireUser } from '../principal.ts';
import { changePassword, createToken, listSessions, listTokens, revokeSession, revokeToken } from './handlers.ts';
import { ChangePassword, CreatedToken, CreateToken, SessionList, TokenList } from './schemas.ts';

const ANYONE = ['admin', 'member', 'support'] as const;

export const meRoutes: FastifyPluginAsyncTypebox<AuthContext> = async (app, ctx) => {
  app.get(
    '/v1/me/sessions',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary: 'Your live console sessions, newest first',
        response: { 200: SessionList, ...ErrorResponses },
      },
    },
    async (req) => listSessions(ctx, requireUser(req, ANYONE)),
  );

  app.delete(
    '/v1/me/sessions/:id',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary: 'Revoke one of your sessions',
        params: IdParams,
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      if (await revokeSession(ctx, requireUser(req, ANYONE), req.params.id)) endSessionCookie(reply, ctx.publicUrl());
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/me/password',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary: 'Change your password (12 to 256 characters); your other sessions end',
        body: ChangePassword,
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      await changePassword(ctx, requireUser(req, ANYONE), req.body, req.ip);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/me/tokens',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary: 'Your personal API tokens that are not revoked (never the token itself)',
        response: { 200: TokenList, ...ErrorResponses },
      },
    },
    async (req) => listTokens(ctx, requireUser(req, ANYONE)),
  );

  app.post(
    '/v1/me/tokens',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary:
          'Create a personal API token: full access of your role, or scoped; expiring in 1 to 365 days or never. The response carries it, once',
        body: CreateToken,
        response: { 201: CreatedToken, ...ErrorResponses },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await createToken(ctx, requireUser(req, ANYONE), req.body)),
  );

  app.delete(
    '/v1/me/tokens/:id',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary: 'Revoke one of your API tokens: it stops working at once',
        params: IdParams,
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      await revokeToken(ctx, requireUser(req, ANYONE), req.params.id);
      return reply.code(204).send(null);
    },
  );
};
