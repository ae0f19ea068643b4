// The tenant's directory as SCIM sees it: its users (Guard's users of the tenant) and its SCIM
// groups with their members. Every query is scoped by the SCIM token's tenant. Every change
// is one transaction with its audit records, and on PostgreSQL it first locks the tenant's
// row, like the users API (users/users-repository.ts), so that two changes of one tenant's
// people run one after the other and the last-admin rule cannot be raced past.
//
// Policy held here:
//   - `active: false` deactivates: users.deactivated_at set, and every session and API token of
//     the user revoked, in the same transaction; `active: true` reactivates (what was revoked
//     stays revoked: the user signs in again);
//   - group membership → role: with an admin group named by the tenant's SSO connections
//     (sso_connections.admin_group, OIDC or SAML), a user is admin while a member of a SCIM
//     group of that displayName and member otherwise, recomputed on every membership change;
//     without one, groups change no role;
//   - the tenant's last active admin is never demoted by a group change (they stay admin), and
//     can be neither deactivated nor deleted (409).

import type { Kysely } from 'kysely';
import { type AuditAction, type AuditActor, audit } from '../audit/index.ts';
import { deleteCredentialsOf, NO_PASSWORD, newId } from '../auth/index.ts';
import { type Database, type Db, engineOf, type ScimGroupTable, type UserTable } from '../db/index.ts';
import { isUniqueViolation } from '../kernel/errors.ts';
import { activeAdmins, lockTenant } from '../users/index.ts';
import type { EqFilter } from './filter.ts';
import type { GroupState, UserState } from './patch.ts';
import { type Paging, ScimError, scimNotFound } from './protocol.ts';

export type UserFilter = EqFilter<'userName' | 'externalId' | 'emails.value'>;
export type GroupFilter = EqFilter<'displayName' | 'externalId'>;

export interface DirectoryUser {
  id: string;
  email: string;
  display_name: string | null;
  external_id: string | null;
  deactivated_at: string | null;
  created_at: string;
  groups: { id: string; display_name: string }[];
}

export interface DirectoryGroup extends ScimGroupTable {
  /** Undefined when the caller asked for the group without them. */
  members?: { id: string; email: string }[];
}

/** Who makes a change: the SCIM token, at a time. */
export interface ChangeBy {
  actor: AuditActor;
  at: Date;
}

const USER_COLUMNS = ['id', 'email', 'display_name', 'external_id', 'deactivated_at', 'created_at'] as const;
/** IN lists are sent in chunks of this many parameters. */
const IN_CHUNK = 500;

const lastAdmin = () =>
  new ScimError(
    409,
    "this is the tenant's last admin: it cannot be deactivated or deleted until another user is admin",
  );
const userNameTaken = () => new ScimError(409, 'a user with this userName already exists', 'uniqueness');
const groupNameTaken = () => new ScimError(409, 'a group with this displayName already exists', 'uniqueness');

export class DirectoryRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  // --- users ---------------------------------------------------------------------------

  async listUsers(
    tenantId: string,
    filter: UserFilter | undefined,
    page: Paging,
  ): Promise<{ users: DirectoryUser[]; total: number }> {
    let query = this.#db.selectFrom('users').where('tenant_id', '=', tenantId);
    if (filter?.attribute === 'externalId') query = query.where('external_id', '=', filter.value);
    else if (filter) query = query.where('email', '=', filter.value.toLowerCase()); // userName and emails.value are the email
    const total = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const rows =
      page.count === 0
        ? []
        : await query
            .select(USER_COLUMNS)
            .orderBy('created_at')
            .orderBy('id')
            .limit(page.count)
            .offset(page.startIndex - 1)
            .execute();
    return { users: await withGroups(this.#db, rows), total: Number(total.n) };
  }

  async findUser(tenantId: string, id: string): Promise<DirectoryUser> {
    return findUser(this.#db, tenantId, id);
  }

  async createUser(tenantId: string, state: UserState, by: ChangeBy): Promise<DirectoryUser> {
    const at = by.at.toISOString();
    const row = {
      id: newId('u'),
      tenant_id: tenantId,
      email: state.userName,
      role: 'member' as const,
      // No password: a provisioned user signs in through the tenant's single sign-on.
      password_hash: NO_PASSWORD,
      created_at: at,
      last_login_at: null,
      display_name: state.displayName,
      external_id: state.externalId,
      deactivated_at: state.active ? null : at,
    };
    try {
      await this.#db.transaction().execute(async (trx) => {
        await trx.insertInto('users').values(row).execute();
        await record(trx, by, 'user.create', row.id, tenantId);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw userNameTaken();
      throw error;
    }
    return { ...row, groups: [] };
  }

  /** Replaces what SCIM keeps of the user with `change(before)` (PUT, PATCH). */
  async changeUser(
    tenantId: string,
    id: string,
    change: (before: UserState) => UserState,
    by: ChangeBy,
  ): Promise<DirectoryUser> {
    const at = by.at.toISOString();
    try {
      return await this.#db.transaction().execute(async (trx) => {
        await lockTenant(trx, tenantId);
        const user = await lockedUser(trx, tenantId, id);
        const before: UserState = {
          userName: user.email,
          displayName: user.display_name ?? null,
          externalId: user.external_id ?? null,
          active: user.deactivated_at == null,
        };
        const after = change(before);
        if (
          after.userName !== before.userName ||
          after.displayName !== before.displayName ||
          after.externalId !== before.externalId
        ) {
          await trx
            .updateTable('users')
            .set({ email: after.userName, display_name: after.displayName, external_id: after.externalId })
            .where('id', '=', id)
            .execute();
          await record(trx, by, 'user.update', id, tenantId);
        }
        if (before.active && !after.active) {
          if (user.role === 'admin' && (await activeAdmins(trx, tenantId)) <= 1) throw lastAdmin();
          await trx.updateTable('users').set({ deactivated_at: at }).where('id', '=', id).execute();
          // Deprovisioning ends what the user holds now, not only what they could open later.
          await trx
            .updateTable('sessions')
            .set({ revoked_at: at })
            .where('user_id', '=', id)
            .where('revoked_at', 'is', null)
            .execute();
          await trx
            .updateTable('api_tokens')
            .set({ revoked_at: at })
            .where('user_id', '=', id)
            .where('revoked_at', 'is', null)
            .execute();
          await record(trx, by, 'user.deactivate', id, tenantId);
        } else if (!before.active && after.active) {
          await trx.updateTable('users').set({ deactivated_at: null }).where('id', '=', id).execute();
          await record(trx, by, 'user.reactivate', id, tenantId);
        }
        return findUser(trx, tenantId, id);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw userNameTaken();
      throw error;
    }
  }

  /** Removes the user with everything that signs them in (RFC 7644 §3.6: the resource is gone). */
  async deleteUser(tenantId: string, id: string, by: ChangeBy): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await lockTenant(trx, tenantId);
      const user = await lockedUser(trx, tenantId, id);
      if (user.role === 'admin' && user.deactivated_at == null && (await activeAdmins(trx, tenantId)) <= 1)
        throw lastAdmin();
      await deleteCredentialsOf(trx, id);
      await trx.deleteFrom('scim_group_members').where('user_id', '=', id).execute();
      await trx.deleteFrom('users').where('id', '=', id).execute();
      await record(trx, by, 'user.delete', id, tenantId);
    });
  }

  // --- groups --------------------------------------------------------------------------

  async listGroups(
    tenantId: string,
    filter: GroupFilter | undefined,
    page: Paging,
    withMembers: boolean,
  ): Promise<{ groups: DirectoryGroup[]; total: number }> {
    let query = this.#db.selectFrom('scim_groups').where('tenant_id', '=', tenantId);
    if (filter?.attribute === 'displayName') query = query.where('display_name', '=', filter.value);
    else if (filter) query = query.where('external_id', '=', filter.value);
    const total = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const rows =
      page.count === 0
        ? []
        : await query
            .selectAll()
            .orderBy('created_at')
            .orderBy('id')
            .limit(page.count)
            .offset(page.startIndex - 1)
            .execute();
    const groups: DirectoryGroup[] = withMembers
      ? await Promise.all(rows.map(async (g) => ({ ...g, members: await membersOf(this.#db, g.id) })))
      : rows;
    return { groups, total: Number(total.n) };
  }

  async findGroup(tenantId: string, id: string): Promise<DirectoryGroup> {
    return findGroup(this.#db, tenantId, id);
  }

  async createGroup(tenantId: string, state: GroupState, by: ChangeBy): Promise<DirectoryGroup> {
    const at = by.at.toISOString();
    const row: ScimGroupTable = {
      id: newId('grp'),
      tenant_id: tenantId,
      display_name: state.displayName,
      external_id: state.externalId,
      created_at: at,
      updated_at: at,
    };
    try {
      return await this.#db.transaction().execute(async (trx) => {
        await lockTenant(trx, tenantId);
        await trx.insertInto('scim_groups').values(row).execute();
        await record(trx, by, 'scim_group.create', row.id, tenantId);
        await setMembers(trx, tenantId, row.id, [], state.members);
        await syncRoles(trx, tenantId, state.members, by);
        return findGroup(trx, tenantId, row.id);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw groupNameTaken();
      throw error;
    }
  }

  /** Replaces the group with `change(before)` (PUT, PATCH); the members' roles follow. */
  async changeGroup(
    tenantId: string,
    id: string,
    change: (before: GroupState) => GroupState,
    by: ChangeBy,
  ): Promise<DirectoryGroup> {
    try {
      return await this.#db.transaction().execute(async (trx) => {
        await lockTenant(trx, tenantId);
        const group = await findGroup(trx, tenantId, id);
        const before: GroupState = {
          displayName: group.display_name,
          externalId: group.external_id,
          members: (group.members ?? []).map((m) => m.id),
        };
        const after = change(before);
        const renamed = after.displayName !== before.displayName;
        if (renamed || after.externalId !== before.externalId)
          await trx
            .updateTable('scim_groups')
            .set({ display_name: after.displayName, external_id: after.externalId })
            .where('id', '=', id)
            .execute();
        const changed = await setMembers(trx, tenantId, id, before.members, after.members);
        if (renamed || changed.length > 0 || after.externalId !== before.externalId) {
          await trx.updateTable('scim_groups').set({ updated_at: by.at.toISOString() }).where('id', '=', id).execute();
          await record(trx, by, 'scim_group.update', id, tenantId);
        }
        // A renamed group may become, or stop being, the admin group: all its members are judged.
        await syncRoles(trx, tenantId, renamed ? [...new Set([...before.members, ...after.members])] : changed, by);
        return findGroup(trx, tenantId, id);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw groupNameTaken();
      throw error;
    }
  }

  async deleteGroup(tenantId: string, id: string, by: ChangeBy): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await lockTenant(trx, tenantId);
      const group = await findGroup(trx, tenantId, id);
      await trx.deleteFrom('scim_group_members').where('group_id', '=', id).execute();
      await trx.deleteFrom('scim_groups').where('id', '=', id).execute();
      await record(trx, by, 'scim_group.delete', id, tenantId);
      await syncRoles(
        trx,
        tenantId,
        (group.members ?? []).map((m) => m.id),
        by,
      );
    });
  }
}

async function record(trx: Kysely<Database>, by: ChangeBy, action: AuditAction, target: string, tenantId: string) {
  await audit({ db: trx, now: () => by.at }, by.actor, action, target, tenantId);
}

/** The user's row, locked for update on PostgreSQL (a sign-in adding a session waits for it). */
async function lockedUser(trx: Kysely<Database>, tenantId: string, id: string) {
  const query = trx
    .selectFrom('users')
    .select([...USER_COLUMNS, 'role'])
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId);
  const user = await (engineOf(trx) === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  if (!user) throw scimNotFound('User', id);
  return user;
}

async function findUser(db: Kysely<Database>, tenantId: string, id: string): Promise<DirectoryUser> {
  const row = await db
    .selectFrom('users')
    .select(USER_COLUMNS)
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!row) throw scimNotFound('User', id);
  return (await withGroups(db, [row]))[0];
}

type UserRow = Pick<UserTable, 'id' | 'email' | 'display_name' | 'external_id' | 'deactivated_at' | 'created_at'>;

async function withGroups(db: Kysely<Database>, rows: UserRow[]): Promise<DirectoryUser[]> {
  if (rows.length === 0) return [];
  const memberships = await db
    .selectFrom('scim_group_members')
    .innerJoin('scim_groups', 'scim_groups.id', 'scim_group_members.group_id')
    .select(['scim_group_members.user_id', 'scim_groups.id', 'scim_groups.display_name'])
    .where(
      'scim_group_members.user_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('scim_groups.display_name')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    display_name: r.display_name ?? null,
    external_id: r.external_id ?? null,
    deactivated_at: r.deactivated_at ?? null,
    created_at: r.created_at,
    groups: memberships.filter((m) => m.user_id === r.id).map((m) => ({ id: m.id, display_name: m.display_name })),
  }));
}

async function findGroup(db: Kysely<Database>, tenantId: string, id: string): Promise<DirectoryGroup> {
  const group = await db
    .selectFrom('scim_groups')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!group) throw scimNotFound('Group', id);
  return { ...group, members: await membersOf(db, id) };
}

async function membersOf(db: Kysely<Database>, groupId: string) {
  return db
    .selectFrom('scim_group_members')
    .innerJoin('users', 'users.id', 'scim_group_members.user_id')
    .select(['users.id', 'users.email'])
    .where('scim_group_members.group_id', '=', groupId)
    .orderBy('users.email')
    .execute();
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += IN_CHUNK) out.push(items.slice(i, i + IN_CHUNK));
  return out;
}

/**
 * Writes the difference between the group's members before and after; every new member must
 * be a user of the tenant (400 invalidValue otherwise). Returns the users who joined or left.
 */
async function setMembers(
  trx: Kysely<Database>,
  tenantId: string,
  groupId: string,
  before: readonly string[],
  after: readonly string[],
): Promise<string[]> {
  const had = new Set(before);
  const has = new Set(after);
  const added = [...has].filter((id) => !had.has(id));
  const removed = [...had].filter((id) => !has.has(id));
  for (const chunk of chunks(added)) {
    const known = await trx
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', chunk)
      .execute();
    if (known.length !== chunk.length) {
      const found = new Set(known.map((k) => k.id));
      const unknown = chunk.find((id) => !found.has(id));
      throw new ScimError(400, `member ${JSON.stringify(unknown)} is not a user of this tenant`, 'invalidValue');
    }
    await trx
      .insertInto('scim_group_members')
      .values(chunk.map((user_id) => ({ group_id: groupId, user_id })))
      .execute();
  }
  for (const chunk of chunks(removed))
    await trx.deleteFrom('scim_group_members').where('group_id', '=', groupId).where('user_id', 'in', chunk).execute();
  return [...added, ...removed];
}

/**
 * Each user's role from their groups: admin while in a group named as an admin group of the
 * tenant's SSO connections, member otherwise — except the tenant's last active admin, who
 * stays admin. No admin group configured: nothing changes.
 */
async function syncRoles(trx: Kysely<Database>, tenantId: string, userIds: readonly string[], by: ChangeBy) {
  if (userIds.length === 0) return;
  const connections = await trx
    .selectFrom('sso_connections')
    .select('admin_group')
    .where('tenant_id', '=', tenantId)
    .where('admin_group', 'is not', null)
    .execute();
  const adminGroups = [...new Set(connections.map((c) => c.admin_group as string))];
  if (adminGroups.length === 0) return;
  for (const chunk of chunks([...new Set(userIds)])) {
    const users = await trx
      .selectFrom('users')
      .select(['id', 'role', 'deactivated_at'])
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', chunk)
      .orderBy('id')
      .execute();
    const inAdminGroup = new Set(
      (
        await trx
          .selectFrom('scim_group_members')
          .innerJoin('scim_groups', 'scim_groups.id', 'scim_group_members.group_id')
          .select('scim_group_members.user_id')
          .where('scim_groups.tenant_id', '=', tenantId)
          .where('scim_groups.display_name', 'in', adminGroups)
          .where('scim_group_members.user_id', 'in', chunk)
          .execute()
      ).map((m) => m.user_id),
    );
    for (const user of users) {
      if (user.role === 'support') continue;
      const wanted = inAdminGroup.has(user.id) ? 'admin' : 'member';
      if (wanted === user.role) continue;
      if (wanted === 'member' && user.deactivated_at == null && (await activeAdmins(trx, tenantId)) <= 1) continue;
      await trx.updateTable('users').set({ role: wanted }).where('id', '=', user.id).execute();
      await record(trx, by, 'user.role', `${user.id}:${wanted}`, tenantId);
    }
  }
}
