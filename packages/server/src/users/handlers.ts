// The admin's users API: list, add (with a one-time set-password link), change role, remove,
// and a new link for a user who lost theirs.

import { NO_PASSWORD, newId, normaliseEmail, type TenantUser } from '../auth/index.ts';
import { ApiError, notFound } from '../kernel/errors.ts';
import { userView } from './schemas.ts';
import type { TenantRole, UserChange, UsersRepository } from './users-repository.ts';

export interface UsersContext {
  users: UsersRepository;
  now: () => Date;
  publicUrl: () => string;
  passwordLinkTtlMs: number;
}

const lastAdmin = () =>
  new ApiError(409, 'last_admin', 'this is the last admin of the tenant: make another user admin first');

function changed(result: UserChange) {
  if (result.done) return result.user;
  throw result.reason === 'last_admin' ? lastAdmin() : notFound('user');
}

export async function listUsers(ctx: UsersContext, admin: TenantUser) {
  return { users: (await ctx.users.list(admin.tenantId)).map(userView) };
}

export async function createUser(ctx: UsersContext, admin: TenantUser, body: { email: string; role: TenantRole }) {
  const now = ctx.now();
  const created = await ctx.users.create(
    admin.tenantId,
    {
      id: newId('u'),
      email: normaliseEmail(body.email),
      role: body.role,
      password_hash: NO_PASSWORD,
      created_at: now.toISOString(),
      last_login_at: null,
    },
    { ttlMs: ctx.passwordLinkTtlMs, publicUrl: ctx.publicUrl() },
    { actor: admin, at: now },
  );
  if (!created) throw new ApiError(409, 'email_taken', 'this tenant already has a user with this email');
  const { user, link } = created;
  return { id: user.id, email: user.email, role: body.role, ...link };
}

export async function changeRole(ctx: UsersContext, admin: TenantUser, id: string, role: TenantRole) {
  return userView(changed(await ctx.users.setRole(admin.tenantId, id, role, { actor: admin, at: ctx.now() })));
}

export async function removeUser(ctx: UsersContext, admin: TenantUser, id: string): Promise<void> {
  changed(await ctx.users.remove(admin.tenantId, id, { actor: admin, at: ctx.now() }));
}

export async function newPasswordLink(ctx: UsersContext, admin: TenantUser, id: string) {
  const link = await ctx.users.newPasswordLink(
    admin.tenantId,
    id,
    { ttlMs: ctx.passwordLinkTtlMs, publicUrl: ctx.publicUrl() },
    { actor: admin, at: ctx.now() },
  );
  if (!link) throw notFound('user');
  return link;
}

export async function resetMfa(ctx: UsersContext, admin: TenantUser, id: string): Promise<void> {
  if (!(await ctx.users.resetMfa(admin.tenantId, id, { actor: admin, at: ctx.now() }))) throw notFound('user');
}
