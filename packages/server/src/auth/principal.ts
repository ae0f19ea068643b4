// Who is calling: resolved once per request from `Authorization: Bearer <secret>`, then
// checked by each route with requireAgent / requireUser. Every query a route makes is scoped
// by the principal's tenant.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Db, engineOf, pgPool, type Role, withStatements } from '../db/index.ts';
import { forbidden, unauthorized } from '../errors.ts';
import { hashSecret, secretKind } from './secrets.ts';

export type Principal =
  | { kind: 'agent'; agentId: string; tenantId: string; hostname: string; environment: string }
  | { kind: 'user'; userId: string; tenantId: string | null; role: Role; email: string };

export type AgentPrincipal = Extract<Principal, { kind: 'agent' }>;
export type UserPrincipal = Extract<Principal, { kind: 'user' }>;
/** An admin or member: people of one tenant (only support staff belong to none). */
export type TenantUser = UserPrincipal & { tenantId: string };

const BEARER = /^Bearer ([A-Za-z0-9_-]{10,200})$/;

export async function resolvePrincipal(db: Db, authorization: string | undefined): Promise<Principal | undefined> {
  if (!authorization) return undefined;
  const m = BEARER.exec(authorization);
  if (!m) throw unauthorized('the Authorization header must be "Bearer <token>"');
  const secret = m[1];
  const hash = hashSecret(secret);
  switch (secretKind(secret)) {
    case 'agentKey': {
      // Every agent request resolves here: prepared SQL on either engine, not a query built per
      // call (building it costs more than running it).
      const agent =
        engineOf(db) === 'sqlite'
          ? await withStatements(db, (sql) =>
              sql.get<{ id: string; tenant_id: string; hostname: string; environment: string }>(
                'select id, tenant_id, hostname, environment from agents where api_key_hash = ? and revoked_at is null',
                hash,
              ),
            )
          : (
              await pgPool(db).query<{ id: string; tenant_id: string; hostname: string; environment: string }>({
                name: 'guard_agent_by_key',
                text: 'select id, tenant_id, hostname, environment from agents where api_key_hash = $1 and revoked_at is null',
                values: [hash],
              })
            ).rows[0];
      return (
        agent && {
          kind: 'agent',
          agentId: agent.id,
          tenantId: agent.tenant_id,
          hostname: agent.hostname,
          environment: agent.environment,
        }
      );
    }
    case 'userToken': {
      const user = await db
        .selectFrom('api_tokens')
        .innerJoin('users', 'users.id', 'api_tokens.user_id')
        .select(['users.id', 'users.tenant_id', 'users.role', 'users.email'])
        .where('api_tokens.token_hash', '=', hash)
        .where('api_tokens.revoked_at', 'is', null)
        .executeTakeFirst();
      return user && { kind: 'user', userId: user.id, tenantId: user.tenant_id, role: user.role, email: user.email };
    }
    default:
      return undefined;
  }
}

/** Every request carries req.principal, resolved once its input passed validation. */
export function authenticateRequests(app: FastifyInstance, db: Db): void {
  app.addHook('onRequest', async (req) => {
    req.principal = undefined;
  });
  app.addHook('preHandler', async (req) => {
    req.principal = await resolvePrincipal(db, req.headers.authorization);
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

export function requireAgent(req: FastifyRequest): AgentPrincipal {
  const p = req.principal;
  if (!p) throw unauthorized();
  if (p.kind !== 'agent') throw forbidden('this endpoint takes an agent API key');
  return p;
}

export function requireUser(req: FastifyRequest, roles: readonly Role[]): UserPrincipal {
  const p = req.principal;
  if (!p) throw unauthorized();
  if (p.kind !== 'user') throw forbidden('this endpoint takes a user API token');
  if (!roles.includes(p.role)) throw forbidden(`this endpoint needs the ${roles.join(' or ')} role`);
  return p;
}

/** requireUser for the routes of a tenant's own people, whose queries are scoped by its id. */
export function requireTenantUser(req: FastifyRequest, roles: readonly Exclude<Role, 'support'>[]): TenantUser {
  const user = requireUser(req, roles);
  if (user.tenantId === null) throw forbidden('this endpoint needs a user of a tenant');
  return { ...user, tenantId: user.tenantId };
}
