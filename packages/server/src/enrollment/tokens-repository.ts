// Enrolment tokens (stored hashed) and the exchange of one for an agent.

import { sql } from 'kysely';
import type { AgentTable, Db, EnrollmentTokenTable } from '../db/index.ts';

export class EnrollmentTokensRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async insert(tenantId: string, token: Omit<EnrollmentTokenTable, 'tenant_id'>): Promise<void> {
    await this.#db
      .insertInto('enrollment_tokens')
      .values({ ...token, tenant_id: tenantId })
      .execute();
  }

  /** Newest first. */
  async list(tenantId: string): Promise<EnrollmentTokenTable[]> {
    return this.#db
      .selectFrom('enrollment_tokens')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at', 'desc')
      .execute();
  }

  /** False when the tenant has no token by that id. */
  async revoke(tenantId: string, id: string, at: string): Promise<boolean> {
    const r = await this.#db
      .updateTable('enrollment_tokens')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Claims one use of the token with this hash and enrols the agent in the token's tenant, in
   * one transaction; undefined (and nothing written) when the token is unknown, expired,
   * revoked or used up. The only query not scoped by a tenant the caller names: the token
   * is what names it.
   */
  async enroll(tokenHash: string, agent: Omit<AgentTable, 'tenant_id'>, now: string): Promise<string | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      // One conditional UPDATE claims a use: expiry, revocation and the limit are checked atomically.
      const claimed = await trx
        .updateTable('enrollment_tokens')
        .set({ uses: sql`uses + 1` })
        .where('token_hash', '=', tokenHash)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .where(sql<boolean>`uses < max_uses`)
        .returning(['tenant_id'])
        .executeTakeFirst();
      if (!claimed) return undefined;
      await trx
        .insertInto('agents')
        .values({ ...agent, tenant_id: claimed.tenant_id })
        .execute();
      return claimed.tenant_id;
    });
  }
}
