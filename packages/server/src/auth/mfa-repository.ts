// A user's second factors as stored (migration 0018): the TOTP secret (sealed by the caller),
// the last step accepted, the ten recovery codes as SHA-256, and how many passkeys they hold;
// and the tenant's sign-in policy (require_mfa, sso_only). Every read and write is by user id.

import type { Kysely } from 'kysely';
import type { Database, Db } from '../db/index.ts';

export interface SecondFactors {
  /** The sealed TOTP secret, when TOTP is on. */
  totpSealed: string | null;
  totpEnabledAt: string | null;
  passkeys: number;
  recoveryCodesLeft: number;
}

export interface SignInPolicy {
  requireMfa: boolean;
  ssoOnly: boolean;
}

export class MfaRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async factors(userId: string): Promise<SecondFactors> {
    const user = await this.#db
      .selectFrom('users')
      .select(['totp_secret_sealed', 'totp_enabled_at'])
      .select((eb) => [
        eb
          .selectFrom('webauthn_credentials')
          .select(eb.fn.countAll<number>().as('n'))
          .whereRef('webauthn_credentials.user_id', '=', 'users.id')
          .as('passkeys'),
        eb
          .selectFrom('mfa_recovery_codes')
          .select(eb.fn.countAll<number>().as('n'))
          .whereRef('mfa_recovery_codes.user_id', '=', 'users.id')
          .where('mfa_recovery_codes.used_at', 'is', null)
          .as('codes'),
      ])
      .where('id', '=', userId)
      .executeTakeFirst();
    return {
      totpSealed: user?.totp_secret_sealed ?? null,
      totpEnabledAt: user?.totp_enabled_at ?? null,
      passkeys: Number(user?.passkeys ?? 0),
      recoveryCodesLeft: Number(user?.codes ?? 0),
    };
  }

  /** The tenant's sign-in policy; vendor staff (no tenant) have none. */
  async policy(tenantId: string | null): Promise<SignInPolicy> {
    if (tenantId === null) return { requireMfa: false, ssoOnly: false };
    const t = await this.#db
      .selectFrom('tenants')
      .select(['require_mfa', 'sso_only'])
      .where('id', '=', tenantId)
      .executeTakeFirst();
    return { requireMfa: t?.require_mfa === 1, ssoOnly: t?.sso_only === 1 };
  }

  async pendingTotp(userId: string): Promise<string | null> {
    const u = await this.#db
      .selectFrom('users')
      .select('totp_pending_sealed')
      .where('id', '=', userId)
      .executeTakeFirst();
    return u?.totp_pending_sealed ?? null;
  }

  async setPendingTotp(userId: string, sealed: string): Promise<void> {
    await this.#db.updateTable('users').set({ totp_pending_sealed: sealed }).where('id', '=', userId).execute();
  }

  /**
   * TOTP goes on with the pending secret (only if it is still the one confirmed, and TOTP is
   * not on already), the confirming code's step recorded and the recovery codes replaced, in
   * one transaction. False when another request changed the setup meanwhile.
   */
  async enableTotp(
    userId: string,
    pendingSealed: string,
    sealed: string,
    step: number,
    codeHashes: string[],
    at: string,
  ): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('users')
        .set({
          totp_secret_sealed: sealed,
          totp_pending_sealed: null,
          totp_enabled_at: at,
          totp_last_step: step,
        })
        .where('id', '=', userId)
        .where('totp_pending_sealed', '=', pendingSealed)
        .where('totp_secret_sealed', 'is', null)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      await replaceCodes(trx, userId, codeHashes);
      return true;
    });
  }

  /**
   * Records `step` as the last accepted, only when it is later than the last one: true once
   * per step, whichever replica asks first (the condition and the write are one statement).
   */
  async acceptStep(userId: string, step: number): Promise<boolean> {
    const r = await this.#db
      .updateTable('users')
      .set({ totp_last_step: step })
      .where('id', '=', userId)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Uses a recovery code once: true only for the first use of an unused code of the user. */
  async useRecoveryCode(userId: string, codeHash: string, at: string): Promise<boolean> {
    const r = await this.#db
      .updateTable('mfa_recovery_codes')
      .set({ used_at: at })
      .where('user_id', '=', userId)
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async replaceRecoveryCodes(userId: string, codeHashes: string[]): Promise<void> {
    await this.#db.transaction().execute((trx) => replaceCodes(trx, userId, codeHashes));
  }

  /** TOTP off: the secret, the pending setup and the recovery codes are gone. */
  async disableTotp(userId: string): Promise<void> {
    await this.#db.transaction().execute((trx) => removeTotp(trx, userId));
  }
}

async function replaceCodes(trx: Kysely<Database>, userId: string, codeHashes: string[]): Promise<void> {
  await trx.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
  await trx
    .insertInto('mfa_recovery_codes')
    .values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash, used_at: null })))
    .execute();
}

async function removeTotp(trx: Kysely<Database>, userId: string): Promise<void> {
  await trx
    .updateTable('users')
    .set({ totp_secret_sealed: null, totp_pending_sealed: null, totp_enabled_at: null, totp_last_step: null })
    .where('id', '=', userId)
    .execute();
  await trx.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
}

/**
 * Every second factor of the user is removed (TOTP, recovery codes, passkeys) and every session
 * and API token ends: an admin's recovery for a user who lost their factors (users capability).
 * `db` may be a transaction, so the reset stands or falls with its audit record.
 */
export async function resetSecondFactors(db: Kysely<Database>, userId: string, at: string): Promise<void> {
  await removeTotp(db, userId);
  await db.deleteFrom('webauthn_credentials').where('user_id', '=', userId).execute();
  await db
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
  await db
    .updateTable('api_tokens')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}
