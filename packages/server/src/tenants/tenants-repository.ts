// A tenant's own settings. Today one: whether vendor support staff may request support bundles
// from the tenant's servers (console push). Its admins control it; every change is audited in
// the transaction that makes it.

import { audit } from '../audit/index.ts';
import type { UserPrincipal } from '../auth/index.ts';
import type { Db } from '../db/index.ts';

export interface TenantSettings {
  allow_support_collection: boolean;
}

export class TenantsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async settings(tenantId: string): Promise<TenantSettings | undefined> {
    const row = await this.#db
      .selectFrom('tenants')
      .select('allow_support_collection')
      .where('id', '=', tenantId)
      .executeTakeFirst();
    return row && { allow_support_collection: row.allow_support_collection === 1 };
  }

  /** Changes the settings given; a change is audited with the old and new value, a repeat is not. */
  async update(
    tenantId: string,
    change: Partial<TenantSettings>,
    by: { actor: UserPrincipal; at: Date },
  ): Promise<TenantSettings | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      if (change.allow_support_collection !== undefined) {
        const value = change.allow_support_collection ? 1 : 0;
        const updated = await trx
          .updateTable('tenants')
          .set({ allow_support_collection: value })
          .where('id', '=', tenantId)
          .where('allow_support_collection', '!=', value)
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) > 0)
          await audit(
            { db: trx, now: () => by.at },
            by.actor,
            'tenant.settings',
            `allow_support_collection=${change.allow_support_collection}`,
            tenantId,
          );
      }
      const row = await trx
        .selectFrom('tenants')
        .select('allow_support_collection')
        .where('id', '=', tenantId)
        .executeTakeFirst();
      return row && { allow_support_collection: row.allow_support_collection === 1 };
    });
  }
}
