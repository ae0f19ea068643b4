// Console sessions, as stored: the token's SHA-256, never the token. Every read and write is
// scoped by the session's user (a user sees and revokes only their own sessions).

import { type Db, engineOf, type Role, type SessionTable } from '../db/index.ts';

/** A session with the user it signs in: what each cookie-authenticated request resolves. */
export interface ResolvedSession {
  session: SessionTable;
  user: { id: string; tenant_id: string | null; role: Role; email: string };
  /** What require_mfa is judged by: the tenant's policy and the user's factors now. */
  mfa: { required: boolean; totp: boolean; passkeys: number };
}

export class SessionsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Inserts a sign-in's session only while the user is still active (not deactivated) and, when
   * `passwordHash` is given, while their password is still that one, the one the sign-in
   * checked; false (nothing written) when a reset, a change or a deactivation came meanwhile.
   * The check and the insert are one transaction, and a password change or a deactivation
   * (which end the user's sessions in their own transaction) runs before or after it, never in
   * between: on PostgreSQL the user's row is locked for share first, so the change waits for
   * this session and ends it, or this sign-in waits for the change and is refused; on SQLite
   * the transaction holds the only connection.
   */
  async insertIfStill(row: SessionTable, passwordHash?: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const query = trx.selectFrom('users').select(['password_hash', 'deactivated_at']).where('id', '=', row.user_id);
      const user = await (engineOf(trx) === 'postgres' ? query.forShare() : query).executeTakeFirst();
      if (!user || user.deactivated_at != null) return false;
      if (passwordHash !== undefined && user.password_hash !== passwordHash) return false;
      await trx.insertInto('sessions').values(row).execute();
      return true;
    });
  }

  /** The session with this token hash and its user (live or not: the caller judges). */
  async findByTokenHash(tokenHash: string): Promise<ResolvedSession | undefined> {
    const row = await this.#db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .leftJoin('tenants', 'tenants.id', 'users.tenant_id')
      .selectAll('sessions')
      .select(['users.tenant_id', 'users.role', 'users.email', 'users.totp_enabled_at', 'tenants.require_mfa'])
      .select((eb) =>
        eb
          .selectFrom('webauthn_credentials')
          .select(eb.fn.countAll<number>().as('n'))
          .whereRef('webauthn_credentials.user_id', '=', 'users.id')
          .as('passkeys'),
      )
      .where('sessions.token_hash', '=', tokenHash)
      .where('users.deactivated_at', 'is', null)
      .executeTakeFirst();
    if (!row) return undefined;
    const { tenant_id, role, email, totp_enabled_at, require_mfa, passkeys, ...session } = row;
    return {
      session,
      user: { id: session.user_id, tenant_id, role, email },
      mfa: { required: require_mfa === 1, totp: totp_enabled_at != null, passkeys: Number(passkeys ?? 0) },
    };
  }

  async touch(id: string, changes: Pick<SessionTable, 'last_seen_at' | 'idle_expires_at'>): Promise<void> {
    await this.#db.updateTable('sessions').set(changes).where('id', '=', id).execute();
  }

  /** The user's sessions that are neither revoked nor expired at `now`, newest first. */
  async listLive(userId: string, now: string): Promise<SessionTable[]> {
    return this.#db
      .selectFrom('sessions')
      .selectAll()
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('idle_expires_at', '>', now)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  /** False when the user has no such session not yet revoked. */
  async revoke(userId: string, id: string, at: string): Promise<boolean> {
    const r = await this.#db
      .updateTable('sessions')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Forgets the user's sessions that ended (expired or revoked) before `before`: run at each
   * sign-in, so the table holds a user's recent sessions, not every one they ever had.
   */
  async deleteEndedOf(userId: string, before: string): Promise<void> {
    await this.#db
      .deleteFrom('sessions')
      .where('user_id', '=', userId)
      .where((eb) =>
        eb.or([eb('expires_at', '<', before), eb('idle_expires_at', '<', before), eb('revoked_at', '<', before)]),
      )
      .execute();
  }
}
