// A tenant's identity providers as stored: one row of sso_connections per protocol, and the
// email domains that route sign-in to it in sso_domains (a domain belongs to one connection
// of one tenant across the whole service: its primary key decides, whichever replica writes).

import type { Kysely } from 'kysely';
import { type AuditActor, audit } from '../audit/index.ts';
import type { Database, Db, SsoProtocol } from '../db/index.ts';
import { ApiError, isUniqueViolation } from '../kernel/errors.ts';

export interface SsoConnection<Config> {
  tenantId: string;
  protocol: SsoProtocol;
  config: Config;
  /** The sealed client secret (OIDC), opened only to sign someone in. */
  secretSealed: string | null;
  emailDomains: string[];
  adminGroup: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface SaveConnection<Config> {
  config: Config;
  /** undefined: keep the stored secret. */
  secretSealed?: string | null;
  emailDomains: readonly string[];
  adminGroup: string | null;
}

export const domainTaken = (domain: string, detail: string) =>
  new ApiError(409, 'domain_taken', `the email domain ${domain} already signs in through ${detail}`);

export class SsoConnections {
  readonly #db: Db;
  readonly #now: () => Date;

  constructor(db: Db, now: () => Date) {
    this.#db = db;
    this.#now = now;
  }

  async find<Config>(tenantId: string, protocol: SsoProtocol): Promise<SsoConnection<Config> | undefined> {
    const row = await this.#db
      .selectFrom('sso_connections')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('protocol', '=', protocol)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      tenantId: row.tenant_id,
      protocol: row.protocol,
      config: JSON.parse(row.config) as Config,
      secretSealed: row.secret_sealed,
      emailDomains: JSON.parse(row.email_domains) as string[],
      adminGroup: row.admin_group,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  /** The tenant and protocol an email domain signs in through, if any. */
  async route(domain: string): Promise<{ tenantId: string; protocol: SsoProtocol } | undefined> {
    const row = await this.#db
      .selectFrom('sso_domains')
      .select(['tenant_id', 'protocol'])
      .where('domain', '=', domain)
      .executeTakeFirst();
    return row && { tenantId: row.tenant_id, protocol: row.protocol };
  }

  /**
   * Creates or replaces the tenant's connection of `protocol` and routes exactly its domains
   * to it, audited in the same transaction. 409 domain_taken when a domain already routes to
   * another tenant, or to this tenant's other protocol.
   */
  async save<Config>(
    tenantId: string,
    protocol: SsoProtocol,
    change: SaveConnection<Config>,
    actor: AuditActor,
  ): Promise<SsoConnection<Config>> {
    const now = this.#now().toISOString();
    try {
      await this.#db.transaction().execute(async (trx) => {
        const held = await trx
          .selectFrom('sso_domains')
          .select(['domain', 'tenant_id', 'protocol'])
          .where('domain', 'in', [...change.emailDomains])
          .execute();
        for (const h of held) {
          if (h.tenant_id !== tenantId) throw domainTaken(h.domain, 'another tenant');
          if (h.protocol !== protocol)
            throw domainTaken(h.domain, `this tenant's ${h.protocol.toUpperCase()} connection`);
        }
        const values = {
          config: JSON.stringify(change.config),
          email_domains: JSON.stringify(change.emailDomains),
          admin_group: change.adminGroup,
          updated_at: now,
          ...(change.secretSealed !== undefined ? { secret_sealed: change.secretSealed } : {}),
        };
        await trx
          .insertInto('sso_connections')
          .values({ tenant_id: tenantId, protocol, secret_sealed: null, created_at: now, ...values })
          .onConflict((oc) => oc.columns(['tenant_id', 'protocol']).doUpdateSet(values))
          .execute();
        await removeDomains(trx, tenantId, protocol);
        await trx
          .insertInto('sso_domains')
          .values(change.emailDomains.map((domain) => ({ domain, tenant_id: tenantId, protocol })))
          .execute();
        await audit({ db: trx, now: this.#now }, actor, 'sso.update', protocol, tenantId);
      });
    } catch (error) {
      // Another tenant claimed one of the domains between the check and the insert.
      if (isUniqueViolation(error)) throw domainTaken(change.emailDomains.join(', '), 'another tenant');
      throw error;
    }
    const saved = await this.find<Config>(tenantId, protocol);
    if (!saved) throw new Error('the connection just saved is gone');
    return saved;
  }

  /** Removes the tenant's connection of `protocol` and its domains (audited); false when there was none. */
  async remove(tenantId: string, protocol: SsoProtocol, actor: AuditActor): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const r = await trx
        .deleteFrom('sso_connections')
        .where('tenant_id', '=', tenantId)
        .where('protocol', '=', protocol)
        .executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) return false;
      await removeDomains(trx, tenantId, protocol);
      await audit({ db: trx, now: this.#now }, actor, 'sso.delete', protocol, tenantId);
      return true;
    });
  }
}

async function removeDomains(trx: Kysely<Database>, tenantId: string, protocol: SsoProtocol): Promise<void> {
  await trx.deleteFrom('sso_domains').where('tenant_id', '=', tenantId).where('protocol', '=', protocol).execute();
}
