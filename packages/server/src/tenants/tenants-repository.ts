// A tenant's own settings: whether vendor support staff may request support bundles from the
// tenant's servers (console push), and how many days its delivery log is kept (null: the
// server's default; webhooks/retention.ts applies it within the server's maximum). Its admins
// control them; every change is audited in the transaction that makes it.

import { audit } from '../audit/index.ts';
import type { UserPrincipal } from '../auth/index.ts';
import type { Db } from '../db/index.ts';

export interface TenantSettings {
  allow_support_collection: boolean;
  /** The tenant's own choice; null: the server's default. */
  delivery_retention_days: number | null;
}

const COLUMNS = ['allow_support_collection', 'delivery_retention_days'] as const;
const settingsOf = (row: { allow_support_collection: number; delivery_retention_days?: number | null }) => ({
  allow_support_collection: row.allow_support_collection === 1,
  delivery_retention_days: row.delivery_retention_days ?? null,
});

export class TenantsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async settings(tenantId: string): Promise<TenantSettings | undefined> {
    const row = await this.#db.selectFrom('tenants').select(COLUMNS).where('id', '=', tenantId).executeTakeFirst();
    return row && settingsOf(row);
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
      if (change.delivery_retention_days !== undefined) {
        const value = change.delivery_retention_days;
        const updated = await trx
          .updateTable('tenants')
          .set({ delivery_retention_days: value })
          .where('id', '=', tenantId)
          .where((eb) =>
            value === null
              ? eb('delivery_retention_days', 'is not', null)
              : eb.or([eb('delivery_retention_days', 'is', null), eb('delivery_retention_days', '!=', value)]),
          )
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) > 0)
          await audit(
            { db: trx, now: () => by.at },
            by.actor,
            'tenant.settings',
            `delivery_retention_days=${value ?? 'default'}`,
            tenantId,
          );
      }
      const row = await trx.selectFrom('tenants').select(COLUMNS).where('id', '=', tenantId).executeTakeFirst();
      return row && settingsOf(row);
    });
  }
}
