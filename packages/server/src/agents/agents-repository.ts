// A tenant's enrolled agents. Agents are created by enrolment (enrollment/) and never deleted:
// bundles and signals keep pointing at them.

import { audit } from '../audit/index.ts';
import type { UserPrincipal } from '../auth/index.ts';
import type { AgentTable, Db } from '../db/index.ts';
import { beforeFilter, type PageRequest } from '../pagination.ts';

export class AgentsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Newest enrolled first. */
  async list(tenantId: string, page: PageRequest): Promise<AgentTable[]> {
    let query = this.#db
      .selectFrom('agents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('enrolled_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit);
    if (page.before) query = query.where(beforeFilter('enrolled_at', 'id', page.before));
    return query.execute();
  }

  /**
   * Revokes the agent's API key and records who did it, in one transaction; a repeat changes
   * and records nothing. Returns the agent (undefined if the tenant has none by that id) and
   * whether this call revoked it.
   */
  async revoke(
    tenantId: string,
    id: string,
    by: { actor: UserPrincipal; at: Date },
  ): Promise<{ row: AgentTable | undefined; changed: boolean }> {
    return this.#db.transaction().execute(async (trx) => {
      const revoked = await trx
        .updateTable('agents')
        .set({ revoked_at: by.at.toISOString() })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      const changed = Number(revoked.numUpdatedRows) > 0;
      if (changed) await audit({ db: trx, now: () => by.at }, by.actor, 'agent.revoke', id, tenantId);
      const row = await trx
        .selectFrom('agents')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return { row, changed };
    });
  }
}
