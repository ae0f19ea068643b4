// A tenant's people, as its admins manage them. Every change is written with its audit record
// in one transaction; the last active admin of a tenant (deactivated ones, SCIM, do not count)
// can be neither demoted nor removed. The check
// and the change are one transaction, and the changes of one tenant's users run one after the
// other: on SQLite the write transaction holds the only connection; on PostgreSQL, where READ
// COMMITTED let two admins demoting each other at once each count the other and both commit
// (no admin left; issue 19, finding 2), the transaction first locks the tenant's row, as the
// quota reservation does (objects/uploads-repository.ts).

import type { Kysely } from 'kysely';
import { audit } from '../audit/index.ts';
import {
  deleteCredentialsOf,
  type IssuedLink,
  issuePasswordLink,
  resetSecondFactors,
  type UserPrincipal,
} from '../auth/index.ts';
import { type Database, type Db, engineOf, type UserTable } from '../db/index.ts';
import { isUniqueViolation } from '../kernel/errors.ts';

export type TenantRole = 'admin' | 'member';

export type UserChange = { done: true; user: UserTable } | { done: false; reason: 'not_found' | 'last_admin' };

export interface ChangeBy {
  actor: UserPrincipal;
  at: Date;
}

export class UsersRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Oldest first. */
  async list(tenantId: string): Promise<UserTable[]> {
    return this.#db
      .selectFrom('users')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async find(tenantId: string, id: string): Promise<UserTable | undefined> {
    return this.#db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }

  /** Adds the user (no password yet) with a set-password link; undefined when the email is taken. */
  async create(
    tenantId: string,
    user: Omit<UserTable, 'tenant_id'>,
    link: { ttlMs: number; publicUrl: string },
    by: ChangeBy,
  ): Promise<{ user: UserTable; link: IssuedLink } | undefined> {
    const row: UserTable = { ...user, tenant_id: tenantId };
    try {
      return await this.#db.transaction().execute(async (trx) => {
        await trx.insertInto('users').values(row).execute();
        const issued = await issuePasswordLink(trx, row.id, { now: by.at, ...link });
        await audit({ db: trx, now: () => by.at }, by.actor, 'user.create', row.id, tenantId);
        return { user: row, link: issued };
      });
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  async setRole(tenantId: string, id: string, role: TenantRole, by: ChangeBy): Promise<UserChange> {
    return this.#db.transaction().execute(async (trx) => {
      await lockTenant(trx, tenantId);
      const user = await trx
        .selectFrom('users')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      if (!user) return { done: false, reason: 'not_found' };
      if (user.role === role) return { done: true, user };
      if (user.role === 'admin' && user.deactivated_at == null && (await activeAdmins(trx, tenantId)) <= 1)
        return { done: false, reason: 'last_admin' };
      await trx.updateTable('users').set({ role }).where('id', '=', id).execute();
      await audit({ db: trx, now: () => by.at }, by.actor, 'user.role', `${id}:${role}`, tenantId);
      return { done: true, user: { ...user, role } };
    });
  }

  /** Removes the user with everything that signs them in: sessions, API tokens, set-password links. */
  async remove(tenantId: string, id: string, by: ChangeBy): Promise<UserChange> {
    return this.#db.transaction().execute(async (trx) => {
      await lockTenant(trx, tenantId);
      // The user's row locked first on PostgreSQL: a sign-in or a new API token (which read it
      // for share before adding a session or token) either comes before, and its row is deleted
      // with the others below, or waits and finds no user — never a row left pointing at none.
      const query = trx.selectFrom('users').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId);
      const user = await (engineOf(trx) === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
      if (!user) return { done: false, reason: 'not_found' };
      if (user.role === 'admin' && user.deactivated_at == null && (await activeAdmins(trx, tenantId)) <= 1)
        return { done: false, reason: 'last_admin' };
      await deleteCredentialsOf(trx, id);
      await trx.deleteFrom('users').where('id', '=', id).execute();
      await audit({ db: trx, now: () => by.at }, by.actor, 'user.delete', id, tenantId);
      return { done: true, user };
    });
  }

  /**
   * Removes every second factor of the user (TOTP, recovery codes, passkeys) and ends their
   * sessions and API tokens, with its audit record: recovery for a user who lost their factors.
   * False when the tenant has no such user.
   */
  async resetMfa(tenantId: string, id: string, by: ChangeBy): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const user = await trx
        .selectFrom('users')
        .select('id')
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      if (!user) return false;
      await resetSecondFactors(trx, id, by.at.toISOString());
      await audit({ db: trx, now: () => by.at }, by.actor, 'user.mfa_reset', id, tenantId);
      return true;
    });
  }

  /** A new set-password link for the user (their earlier links stop working). */
  async newPasswordLink(
    tenantId: string,
    id: string,
    link: { ttlMs: number; publicUrl: string },
    by: ChangeBy,
  ): Promise<IssuedLink | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      const user = await trx
        .selectFrom('users')
        .select('id')
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      if (!user) return undefined;
      const issued = await issuePasswordLink(trx, id, { now: by.at, ...link });
      await audit({ db: trx, now: () => by.at }, by.actor, 'user.password_link', id, tenantId);
      return issued;
    });
  }
}

/**
 * The tenant's admins who can act: a deactivated admin (SCIM) keeps no tenant administered.
 * The last-admin rule of every capability that changes roles (users, sso, scim) counts these.
 */
export async function activeAdmins(trx: Kysely<Database>, tenantId: string): Promise<number> {
  const r = await trx
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('role', '=', 'admin')
    .where('deactivated_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * Serialises the tenant's user changes on PostgreSQL until the transaction ends (`for no key
 * update`: it conflicts with itself and with the quota reservation's lock, not with inserts
 * that merely reference the tenant). Taken before anything is read, so every read after it
 * sees the changes that held it before. SQLite's dialect has no row locks and needs none.
 */
export async function lockTenant(trx: Kysely<Database>, tenantId: string): Promise<void> {
  if (engineOf(trx) === 'postgres')
    await trx.selectFrom('tenants').select('id').where('id', '=', tenantId).forNoKeyUpdate().execute();
}

export type OperatorReset =
  | { kind: 'done'; userId: string; tenantId: string }
  | { kind: 'not_found' }
  | { kind: 'ambiguous'; tenants: { id: string; name: string }[] };

/**
 * The operator's reset (guard-server reset-mfa): the user of `email` in `tenantId`, or in the
 * only tenant the email belongs to, loses every second factor; audited as `operator:cli`.
 */
export async function resetMfaByOperator(
  db: Db,
  now: () => Date,
  email: string,
  tenantId: string | undefined,
): Promise<OperatorReset> {
  let query = db
    .selectFrom('users')
    .innerJoin('tenants', 'tenants.id', 'users.tenant_id')
    .select(['users.id', 'users.tenant_id', 'tenants.name'])
    .where('users.email', '=', email);
  if (tenantId !== undefined) query = query.where('users.tenant_id', '=', tenantId);
  const found = await query.limit(20).execute();
  if (found.length === 0) return { kind: 'not_found' };
  if (found.length > 1)
    return { kind: 'ambiguous', tenants: found.map((u) => ({ id: u.tenant_id ?? '', name: u.name })) };
  const [user] = found;
  const at = now();
  await db.transaction().execute(async (trx) => {
    await resetSecondFactors(trx, user.id, at.toISOString());
    await audit(
      { db: trx, now: () => at },
      { userId: 'operator:cli', role: 'operator' },
      'user.mfa_reset',
      user.id,
      user.tenant_id,
    );
  });
  return { kind: 'done', userId: user.id, tenantId: user.tenant_id ?? '' };
}
