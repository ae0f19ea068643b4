// A user's passkeys as stored (webauthn_credentials): the credential id the authenticator chose,
// its COSE public key, the signature counter it last reported, and when it was made and last
// used. Every read and write of the account API is scoped by the user's id; sign-in finds a
// credential by its id alone (the id is what a discoverable passkey answers with).

import type { Selectable } from 'kysely';
import type { Db, Role, WebauthnCredentialTable } from '../../db/index.ts';

export type Passkey = Selectable<WebauthnCredentialTable>;
/** A passkey as added: every column given. */
export type NewPasskey = Passkey;

/** A passkey and the account it signs in to. */
export interface PasskeyOwner {
  passkey: Passkey;
  user: { id: string; email: string; role: Role; tenant_id: string | null; deactivated: boolean };
  /** The user's tenant signs in through its SSO (tenants.sso_only). */
  ssoOnly: boolean;
}

export class PasskeysRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** The user's passkeys, oldest first. */
  async listOf(userId: string): Promise<Passkey[]> {
    return this.#db
      .selectFrom('webauthn_credentials')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** Adds a passkey; false (nothing written) when a credential of this id is already stored. */
  async insert(row: NewPasskey): Promise<boolean> {
    const r = await this.#db
      .insertInto('webauthn_credentials')
      .values(row)
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async rename(userId: string, id: string, name: string): Promise<Passkey | undefined> {
    return this.#db
      .updateTable('webauthn_credentials')
      .set({ name })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
  }

  async remove(userId: string, id: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('webauthn_credentials')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** The passkey of this credential id and its user, whichever tenant they belong to. */
  async withOwner(id: string): Promise<PasskeyOwner | undefined> {
    const row = await this.#db
      .selectFrom('webauthn_credentials')
      .innerJoin('users', 'users.id', 'webauthn_credentials.user_id')
      .leftJoin('tenants', 'tenants.id', 'users.tenant_id')
      .selectAll('webauthn_credentials')
      .select(['users.email', 'users.role', 'users.tenant_id', 'users.deactivated_at', 'tenants.sso_only'])
      .where('webauthn_credentials.id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    const { email, role, tenant_id, deactivated_at, sso_only, ...passkey } = row;
    return {
      passkey,
      user: { id: passkey.user_id, email, role, tenant_id, deactivated: deactivated_at != null },
      ssoOnly: Number(sso_only ?? 0) === 1,
    };
  }

  /**
   * Records a use: the new counter and the time. Written only while the stored counter is still
   * the one the assertion was checked against, so of two assertions checked at once only one
   * moves it (false for the other).
   */
  async used(id: string, checkedCounter: number, newCounter: number, at: string): Promise<boolean> {
    const r = await this.#db
      .updateTable('webauthn_credentials')
      .set({ counter: newCounter, last_used_at: at })
      .where('id', '=', id)
      .where('counter', '=', checkedCounter)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
