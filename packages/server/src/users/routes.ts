// The users API (DESIGN §7 contract), for a tenant's admins; audited:
//   GET    /v1/users                      the tenant's users
//   POST   /v1/users                      add one {email, role} → its one-time set_password_url
//   PATCH  /v1/users/{id}                 change the role {role}
//   DELETE /v1/users/{id}                 remove (their sessions, tokens and links die with them)
//   POST   /v1/users/{id}/password-link   a new set-password link (the earlier ones stop working)
// The last admin of a tenant can be neither demoted nor removed (409 last_admin).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireTenantUser } from '../auth/index.ts';
import type { Db } from '../db/index.ts';
import { ErrorResponses, IdParams } from '../kernel/route-schemas.ts';
import {
  changeRole,
  createUser,
  listUsers,
  newPasswordLink,
  removeUser,
  resetMfa,
  type UsersContext,
} from './handlers.ts';
import { CreatedUser, CreateUser, PasswordLink, UpdateUser, UserList, UserView } from './schemas.ts';
import { UsersRepository } from './users-repository.ts';

/** What the users capability needs of the server (app.ts hands it AppDeps, which has all of it). */
export interface UsersDeps {
  db: Db;
  now: () => Date;
  /** Base of set-password links. */
  publicUrl: () => string;
  config: { sessions: { passwordLinkTtlMs: number } };
}

export const userRoutes: FastifyPluginAsyncTypebox<UsersDeps> = async (app, deps) => {
  const ctx: UsersContext = {
    users: new UsersRepository(deps.db),
    now: deps.now,
    publicUrl: deps.publicUrl,
    passwordLinkTtlMs: deps.config.sessions.passwordLinkTtlMs,
  };

  app.get(
    '/v1/users',
    {
      config: { scope: 'users' },
      schema: {
        tags: ['users'],
        summary: "The tenant's users, oldest first (admin)",
        response: { 200: UserList, ...ErrorResponses },
      },
    },
    async (req) => listUsers(ctx, requireTenantUser(req, ['admin'])),
  );

  app.post(
    '/v1/users',
    {
      config: { scope: 'users' },
      schema: {
        tags: ['users'],
        summary: 'Add a user (admin). The response carries a one-time set_password_url, shown once; 409 email_taken',
        body: CreateUser,
        response: { 201: CreatedUser, ...ErrorResponses },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await createUser(ctx, requireTenantUser(req, ['admin']), req.body)),
  );

  app.patch(
    '/v1/users/:id',
    {
      config: { scope: 'users' },
      schema: {
        tags: ['users'],
        summary: "Change a user's role (admin); 409 last_admin for the tenant's last admin",
        params: IdParams,
        body: UpdateUser,
        response: { 200: UserView, ...ErrorResponses },
      },
    },
    async (req) => changeRole(ctx, requireTenantUser(req, ['admin']), req.params.id, req.body.role),
  );

  app.delete(
    '/v1/users/:id',
    {
      config: { scope: 'users' },
      schema: {
        tags: ['users'],
        summary:
          'Remove a user (admin): their sessions, API tokens and set-password links die with them; ' +
          "409 last_admin for the tenant's last admin",
        params: IdParams,
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      await removeUser(ctx, requireTenantUser(req, ['admin']), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/v1/users/:id/mfa',
    {
      config: { scope: 'identity' },
      schema: {
        tags: ['users'],
        summary:
          "Reset a user's second factors (admin; audited): their authenticator app, recovery codes and passkeys " +
          'are removed and their sessions and API tokens end. For a user who lost their factors: they sign in ' +
          'with their password and set a factor up again',
        params: IdParams,
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      await resetMfa(ctx, requireTenantUser(req, ['admin']), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/users/:id/password-link',
    {
      config: { scope: 'users' },
      schema: {
        tags: ['users'],
        summary: "A new one-time set-password link for a user (admin); the user's earlier links stop working",
        params: IdParams,
        response: { 201: PasswordLink, ...ErrorResponses },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await newPasswordLink(ctx, requireTenantUser(req, ['admin']), req.params.id)),
  );
};
