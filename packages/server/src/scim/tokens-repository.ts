// A tenant's SCIM tokens (gsc_…): each stored as its SHA-256 only (auth/secrets.ts: 256
// random bits make a plain hash a sufficient at-rest form, and the lookup an indexed equality).
// Revoked tokens are kept (revoked_at) for the audit trail; they authenticate nothing.

import { type AuditActor, audit } from '../audit/index.ts';
import type { Db, ScimTokenTable } from '../db/index.ts';

/** Live tokens a tenant may hold at once: one per identity provider, and a few for a rotation. */
export const MAX_SCIM_TOKENS_PER_TENANT = 10;
/** A token's use is written at most this often (last_used_at), not on every request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export type ScimTokenView = Pick<ScimTokenTable, 'id' | 'name' | 'created_at' | 'last_used_at'>;

export class ScimTokensRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** The tenant's live tokens, newest first. */
  async list(tenantId: string): Promise<ScimTokenView[]> {
    return this.#db
      .selectFrom('scim_tokens')
      .select(['id', 'name', 'created_at', 'last_used_at'])
      .where('tenant_id', '=', tenantId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  /** Adds the token with its audit record; false when the tenant already holds the most it may. */
  async create(row: Omit<ScimTokenTable, 'last_used_at' | 'revoked_at'>, actor: AuditActor): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const live = await trx
        .selectFrom('scim_tokens')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('tenant_id', '=', row.tenant_id)
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow();
      if (Number(live.n) >= MAX_SCIM_TOKENS_PER_TENANT) return false;
      await trx
        .insertInto('scim_tokens')
        .values({ ...row, last_used_at: null, revoked_at: null })
        .execute();
      await audit({ db: trx, now: () => new Date(row.created_at) }, actor, 'scim_token.create', row.id, row.tenant_id);
      return true;
    });
  }

  /** False when the tenant has no such live token. */
  async revoke(tenantId: string, id: string, actor: AuditActor, at: Date): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('scim_tokens')
        .set({ revoked_at: at.toISOString() })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      await audit({ db: trx, now: () => at }, actor, 'scim_token.revoke', id, tenantId);
      return true;
    });
  }

  /** The live token of a hash, its use recorded (at most once a LAST_USED_RESOLUTION_MS). */
  async use(tokenHash: string, at: Date): Promise<{ id: string; tenantId: string } | undefined> {
    const token = await this.#db
      .selectFrom('scim_tokens')
      .select(['id', 'tenant_id', 'last_used_at'])
      .where('token_hash', '=', tokenHash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!token) return undefined;
    if (token.last_used_at === null || at.getTime() - Date.parse(token.last_used_at) >= LAST_USED_RESOLUTION_MS)
      await this.#db
        .updateTable('scim_tokens')
        .set({ last_used_at: at.toISOString() })
        .where('id', '=', token.id)
        .execute();
    return { id: token.id, tenantId: token.tenant_id };
  }
}
