// What proves a person is who they say, as stored: their password hash (users), their API
// tokens and their one-time set-password links. Tokens and links are stored as SHA-256 only.

import type { Kysely } from 'kysely';
import {
  type ApiTokenTable,
  type Database,
  type Db,
  engineOf,
  type PasswordLinkTable,
  type Role,
} from '../db/index.ts';

/** Sign-in checks the password of at most this many accounts of one email. */
export const MAX_ACCOUNTS_PER_EMAIL = 20;

export interface Account {
  id: string;
  tenant_id: string | null;
  role: Role;
  email: string;
  password_hash: string;
}

export class CredentialsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * The accounts of an email: one per tenant it was added to (an email is unique within a
   * tenant, not across them: migration 0015), and one among the vendor's staff, oldest first.
   */
  async accountsByEmail(email: string): Promise<(Account & { tenant_name: string | null })[]> {
    return this.#db
      .selectFrom('users')
      .leftJoin('tenants', 'tenants.id', 'users.tenant_id')
      .select([
        'users.id',
        'users.tenant_id',
        'users.role',
        'users.email',
        'users.password_hash',
        'tenants.name as tenant_name',
      ])
      .where('users.email', '=', email)
      .where('users.deactivated_at', 'is', null)
      .orderBy('users.created_at')
      .orderBy('users.id')
      .limit(MAX_ACCOUNTS_PER_EMAIL)
      .execute();
  }

  async accountById(id: string): Promise<Account | undefined> {
    return this.#db
      .selectFrom('users')
      .select(['id', 'tenant_id', 'role', 'email', 'password_hash'])
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async signedIn(userId: string, at: string): Promise<void> {
    await this.#db.updateTable('users').set({ last_login_at: at }).where('id', '=', userId).execute();
  }

  /** Sets the password and revokes the user's sessions but `keepSessionId`, in one transaction. */
  async setPassword(userId: string, passwordHash: string, at: string, keepSessionId?: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
      let sessions = trx
        .updateTable('sessions')
        .set({ revoked_at: at })
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null);
      if (keepSessionId !== undefined) sessions = sessions.where('id', '!=', keepSessionId);
      await sessions.execute();
    });
  }

  // --- API tokens ------------------------------------------------------------------------

  /**
   * Inserts a token of the user only while the credential the request came with (its session
   * or API token) is live; false (nothing written) when it was revoked meanwhile. A reset
   * through a set-password link (which revokes every session and token of the user, in its own
   * transaction) runs before or after this, never in between: on PostgreSQL the user's row is
   * locked for share first, so the reset waits for this token and revokes it, or this request
   * waits for the reset and is refused; on SQLite the transaction holds the only connection.
   */
  async insertTokenWhileLive(row: ApiTokenTable, via: { sessionId?: string; tokenId?: string }): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const user = trx.selectFrom('users').select('id').where('id', '=', row.user_id);
      if (!(await (engineOf(trx) === 'postgres' ? user.forShare() : user).executeTakeFirst())) return false;
      const live = await trx
        .selectFrom(via.sessionId === undefined ? 'api_tokens' : 'sessions')
        .select('id')
        .where('id', '=', via.sessionId ?? via.tokenId ?? '')
        .where('user_id', '=', row.user_id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (!live) return false;
      await trx.insertInto('api_tokens').values(row).execute();
      return true;
    });
  }

  /** The user's tokens not revoked, newest first. */
  async listTokens(userId: string): Promise<ApiTokenTable[]> {
    return this.#db
      .selectFrom('api_tokens')
      .selectAll()
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  /** False when the user has no such token not yet revoked. */
  async revokeToken(userId: string, id: string, at: string): Promise<boolean> {
    const r = await this.#db
      .updateTable('api_tokens')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  // --- set-password links ----------------------------------------------------------------

  async linkByTokenHash(tokenHash: string): Promise<(PasswordLinkTable & { email: string }) | undefined> {
    return this.#db
      .selectFrom('password_links')
      .innerJoin('users', 'users.id', 'password_links.user_id')
      .selectAll('password_links')
      .select('users.email')
      .where('password_links.token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  /**
   * Uses the link (once: a conditional update, so two concurrent uses cannot both win), sets
   * the password, revokes the user's sessions and personal API tokens and deletes their
   * passkeys, in one transaction: a link is how an admin recovers an account that may be in
   * someone else's hands, so nothing signed in before it keeps working (an intruder's passkey
   * included) (docs/security.md, "Password resets"). False when
   * the link is unknown, used or expired at `at`.
   */
  async useLink(tokenHash: string, passwordHash: string, at: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const used = await trx
        .updateTable('password_links')
        .set({ used_at: at })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', at)
        .returning('user_id')
        .executeTakeFirst();
      if (!used) return false;
      await trx.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', used.user_id).execute();
      await trx
        .updateTable('sessions')
        .set({ revoked_at: at })
        .where('user_id', '=', used.user_id)
        .where('revoked_at', 'is', null)
        .execute();
      await trx
        .updateTable('api_tokens')
        .set({ revoked_at: at })
        .where('user_id', '=', used.user_id)
        .where('revoked_at', 'is', null)
        .execute();
      await trx.deleteFrom('webauthn_credentials').where('user_id', '=', used.user_id).execute();
      return true;
    });
  }
}

/** A new set-password link for the user; the user's earlier links stop working. */
export async function insertPasswordLink(db: Kysely<Database>, row: PasswordLinkTable): Promise<void> {
  await db.deleteFrom('password_links').where('user_id', '=', row.user_id).execute();
  await db.insertInto('password_links').values(row).execute();
}

/** Deletes everything that signs the user in: sessions, API tokens, set-password links (a user being removed). */
export async function deleteCredentialsOf(db: Kysely<Database>, userId: string): Promise<void> {
  await db.deleteFrom('sessions').where('user_id', '=', userId).execute();
  await db.deleteFrom('api_tokens').where('user_id', '=', userId).execute();
  await db.deleteFrom('password_links').where('user_id', '=', userId).execute();
}
