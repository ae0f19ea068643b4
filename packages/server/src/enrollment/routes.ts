// Enrolment: an agent exchanges an enrolment token for its own API key (DESIGN §3, §6).
// Tokens expire, have a use limit and can be revoked; they and the keys are stored hashed.

import { EnrollRequest, EnrollResponse } from '@guard/contract';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { requireUser } from '../auth/principal.ts';
import { hashSecret, newId, newSecret } from '../auth/secrets.ts';
import type { AppDeps } from '../deps.ts';
import { ApiError, notFound } from '../errors.ts';

export const DEFAULT_ENROLL_TOKEN_TTL_SECONDS = 7 * 24 * 3600;
export const DEFAULT_ENROLL_TOKEN_MAX_USES = 100;

const CreateTokenRequest = Type.Object(
  {
    expires_in_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 365 * 24 * 3600 })),
    max_uses: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000 })),
  },
  { additionalProperties: false },
);
const TokenView = Type.Object({
  id: Type.String(),
  expires_at: Type.String(),
  max_uses: Type.Integer(),
  uses: Type.Integer(),
  revoked: Type.Boolean(),
  created_at: Type.String(),
});
const CreatedToken = Type.Object({ ...TokenView.properties, token: Type.String({ description: 'shown once' }) });
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/** Creates an enrolment token for a tenant; used by the API and by `guard-server setup`. */
export async function createEnrollmentToken(
  deps: Pick<AppDeps, 'db' | 'now'>,
  tenantId: string,
  opts: { expiresInSeconds?: number; maxUses?: number } = {},
) {
  const now = deps.now();
  const token = newSecret('enrollToken');
  const row = {
    id: newId('et'),
    tenant_id: tenantId,
    token_hash: hashSecret(token),
    expires_at: new Date(
      now.getTime() + (opts.expiresInSeconds ?? DEFAULT_ENROLL_TOKEN_TTL_SECONDS) * 1000,
    ).toISOString(),
    max_uses: opts.maxUses ?? DEFAULT_ENROLL_TOKEN_MAX_USES,
    uses: 0,
    revoked_at: null,
    created_at: now.toISOString(),
  };
  await deps.db.insertInto('enrollment_tokens').values(row).execute();
  return { token, row };
}

function view(row: {
  id: string;
  expires_at: string;
  max_uses: number;
  uses: number;
  revoked_at: string | null;
  created_at: string;
}) {
  return {
    id: row.id,
    expires_at: row.expires_at,
    max_uses: row.max_uses,
    uses: row.uses,
    revoked: row.revoked_at !== null,
    created_at: row.created_at,
  };
}

export async function enrollmentRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

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
    async (req, reply) => {
      const body = req.body as EnrollRequest;
      const now = deps.now().toISOString();
      const apiKey = newSecret('agentKey');
      const agentId = newId('ag');
      const tenantId = await db.transaction().execute(async (trx) => {
        // One conditional UPDATE claims a use: expiry, revocation and the limit are checked atomically.
        const claimed = await trx
          .updateTable('enrollment_tokens')
          .set({ uses: sql`uses + 1` })
          .where('token_hash', '=', hashSecret(body.token))
          .where('revoked_at', 'is', null)
          .where('expires_at', '>', now)
          .where(sql<boolean>`uses < max_uses`)
          .returning(['tenant_id'])
          .executeTakeFirst();
        if (!claimed) return undefined;
        await trx
          .insertInto('agents')
          .values({
            id: agentId,
            tenant_id: claimed.tenant_id,
            api_key_hash: hashSecret(apiKey),
            hostname: body.hostname ?? '',
            environment: body.environment ?? '',
            agent_version: body.agent_version ?? '',
            enrolled_at: now,
            revoked_at: null,
          })
          .execute();
        return claimed.tenant_id;
      });
      if (!tenantId)
        throw new ApiError(
          401,
          'invalid_enrollment_token',
          'the enrolment token is unknown, expired, revoked or used up',
        );
      req.log.info({ agentId, tenantId }, 'agent enrolled');
      return reply.code(201).send({ agent_id: agentId, tenant_id: tenantId, api_key: apiKey });
    },
  );

  app.post(
    '/v1/enrollment-tokens',
    {
      schema: {
        tags: ['agents'],
        summary: 'Create an enrolment token (admin)',
        body: CreateTokenRequest,
        response: { 201: CreatedToken },
      },
    },
    async (req, reply) => {
      const user = requireUser(req, ['admin']);
      const body = req.body as { expires_in_seconds?: number; max_uses?: number };
      const { token, row } = await createEnrollmentToken(deps, user.tenantId as string, {
        expiresInSeconds: body.expires_in_seconds,
        maxUses: body.max_uses,
      });
      return reply.code(201).send({ ...view(row), token });
    },
  );

  app.get(
    '/v1/enrollment-tokens',
    {
      schema: {
        tags: ['agents'],
        summary: 'List enrolment tokens (admin)',
        response: { 200: Type.Object({ tokens: Type.Array(TokenView) }) },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin']);
      const rows = await db
        .selectFrom('enrollment_tokens')
        .selectAll()
        .where('tenant_id', '=', user.tenantId as string)
        .orderBy('created_at', 'desc')
        .execute();
      return { tokens: rows.map(view) };
    },
  );

  app.delete(
    '/v1/enrollment-tokens/:id',
    {
      schema: {
        tags: ['agents'],
        summary: 'Revoke an enrolment token (admin)',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      const user = requireUser(req, ['admin']);
      const { id } = req.params as { id: string };
      const r = await db
        .updateTable('enrollment_tokens')
        .set({ revoked_at: deps.now().toISOString() })
        .where('id', '=', id)
        .where('tenant_id', '=', user.tenantId as string)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) throw notFound('enrolment token');
      return reply.code(204).send();
    },
  );
}
