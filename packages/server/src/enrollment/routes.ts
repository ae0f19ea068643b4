// Enrolment: an agent exchanges an enrolment token for its own API key (DESIGN §3, §6).
// Tokens expire, have a use limit and can be revoked; they and the keys are stored hashed.
//   POST   /v1/agents/enroll            enrolment token → agent API key (enroll.ts)
//   POST   /v1/enrollment-tokens        admin: create a token, shown once (tokens.ts)
//   GET    /v1/enrollment-tokens        admin: list
//   DELETE /v1/enrollment-tokens/{id}   admin: revoke

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EnrollRequest, EnrollResponse } from '@guard/contract';
import { Type } from 'typebox';
import { requireTenantUser } from '../auth/index.ts';
import type { Db } from '../db/index.ts';
import { notFound } from '../kernel/errors.ts';
import { IdParams } from '../kernel/route-schemas.ts';
import { enrollAgent } from './enroll.ts';
import { CreatedToken, CreateTokenRequest, TokenList, tokenView } from './schemas.ts';
import { createEnrollmentToken } from './tokens.ts';
import { EnrollmentTokensRepository } from './tokens-repository.ts';

/** What an admin pastes on a server: the token goes on standard input, so it is in no process list or shell history. */
export function enrollCommand(publicUrl: string): string {
  return `guard-agent enroll --url ${publicUrl} --token -`;
}

/** What enrolment needs of the server. */
export interface EnrollmentDeps {
  db: Db;
  now: () => Date;
  /** The server's address in the enrol command shown with a new token. */
  publicUrl: () => string;
}

export const enrollmentRoutes: FastifyPluginAsyncTypebox<EnrollmentDeps> = async (app, deps) => {
  const tokens = new EnrollmentTokensRepository(deps.db);

  app.post(
    '/v1/agents/enroll',
    {
      schema: {
        tags: ['agents'],
        summary: 'Exchange an enrolment token for an agent API key',
        body: EnrollRequest,
        response: { 201: EnrollResponse },
      },
    },
    async (req, reply) => reply.code(201).send(await enrollAgent(tokens, req.body, deps.now().toISOString(), req.log)),
  );

  app.post(
    '/v1/enrollment-tokens',
    {
      config: { scope: 'servers' },
      schema: {
        tags: ['agents'],
        summary: 'Create an enrolment token (admin)',
        body: CreateTokenRequest,
        response: { 201: CreatedToken },
      },
    },
    async (req, reply) => {
      const user = requireTenantUser(req, ['admin']);
      const { token, row } = await createEnrollmentToken(deps, user.tenantId, {
        expiresInSeconds: req.body.expires_in_seconds,
        maxUses: req.body.max_uses,
      });
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...tokenView(row), token, enroll_command: enrollCommand(deps.publicUrl()) });
    },
  );

  app.get(
    '/v1/enrollment-tokens',
    {
      config: { scope: 'servers' },
      schema: {
        tags: ['agents'],
        summary: 'List enrolment tokens (admin)',
        response: { 200: TokenList },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin']);
      return { tokens: (await tokens.list(user.tenantId)).map(tokenView) };
    },
  );

  app.delete(
    '/v1/enrollment-tokens/:id',
    {
      config: { scope: 'servers' },
      schema: {
        tags: ['agents'],
        summary: 'Revoke an enrolment token (admin)',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      const user = requireTenantUser(req, ['admin']);
      if (!(await tokens.revoke(user.tenantId, req.params.id, deps.now().toISOString())))
        throw notFound('enrolment token');
      return reply.code(204).send(null);
    },
  );
};
