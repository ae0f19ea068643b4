// A tenant's own settings: whether vendor support staff may request support bundles from the
// tenant's servers (console push), its sign-in policy (require_mfa, sso_only), how many days its delivery log is kept (null: the
// server's default; webhooks/retention.ts applies it within the server's maximum) and how many days its support bundles are
// kept (null: the default; support/retention.ts). Its admins
// control them; every change is audited in the transaction that makes it.

import { audit } from '../audit/index.ts';
import type { UserPrincipal } from '../auth/index.ts';
import type { Db } from '../db/index.ts';

export interface TenantSettings {
  allow_support_collection: boolean;
  /** Password sign-ins must hold a second factor (DESIGN §6). */
  require_mfa: boolean;
  /** Sign-in through the tenant's SSO only; passwords for admins holding TOTP (break-glass). */
  sso_only: boolean;
  /** The tenant's own choice; null: the server's default. */
  delivery_retention_days: number | null;
  /** Days the tenant keeps its support bundles; null: the default (support/settings.ts). */
  bundle_retention_days: number | null;
}

/** The settings that are on or off (integer 0/1 columns of tenants). */
const FLAGS = ['allow_support_collection', 'require_mfa', 'sso_only'] as const;
type Flag = (typeof FLAGS)[number];

/** The settings that are a number of days, or null for the server's default. */
const DAYS = ['delivery_retention_days', 'bundle_retention_days'] as const;

const COLUMNS = [...FLAGS, ...DAYS] as const;
const settingsOf = (
  row: Record<Flag, number> & { delivery_retention_days?: number | null; bundle_retention_days?: number | null },
) => ({
  allow_support_collection: row.allow_support_collection === 1,
  require_mfa: row.require_mfa === 1,
  sso_only: row.sso_only === 1,
  delivery_retention_days: row.delivery_retention_days ?? null,
  bundle_retention_days: row.bundle_retention_days ?? null,
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
      for (const flag of FLAGS) {
        if (change[flag] === undefined) continue;
        const value = change[flag] ? 1 : 0;
        const updated = await trx
          .updateTable('tenants')
          .set({ [flag]: value })
          .where('id', '=', tenantId)
          .where(flag, '!=', value)
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) > 0)
          await audit({ db: trx, now: () => by.at }, by.actor, 'tenant.settings', `${flag}=${change[flag]}`, tenantId);
      }
      for (const column of DAYS) {
        const value = change[column];
        if (value === undefined) continue;
        const updated = await trx
          .updateTable('tenants')
          .set({ [column]: value })
          .where('id', '=', tenantId)
          .where((eb) =>
            value === null ? eb(column, 'is not', null) : eb.or([eb(column, 'is', null), eb(column, '!=', value)]),
          )
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) > 0)
          await audit(
            { db: trx, now: () => by.at },
            by.actor,
            'tenant.settings',
            `${column}=${value ?? 'default'}`,
            tenantId,
          );
      }
      const row = await trx.selectFrom('tenants').select(COLUMNS).where('id', '=', tenantId).executeTakeFirst();
      return row && settingsOf(row);
    });
  }
}

/** True when the tenant has a single sign-on connection (OIDC or SAML): sso_only needs one. */
export async function hasSsoConnection(db: Db, tenantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('sso_connections')
    .select('protocol')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row !== undefined;
}
