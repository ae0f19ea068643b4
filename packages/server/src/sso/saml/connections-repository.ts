// A tenant's SAML connection: one row of sso_connections (protocol 'saml') and its email
// domains in sso_domains, where a domain belongs to one tenant's one connection (the primary
// key decides between two tenants claiming it at once, on either engine).

import type { AuditActor } from '../../audit/index.ts';
import { audit } from '../../audit/index.ts';
import type { Db } from '../../db/index.ts';
import { conflict, isUniqueViolation } from '../../kernel/errors.ts';

export interface SamlSettings {
  idp_entity_id: string;
  sso_url: string;
  /** PEM, one to three. */
  idp_certificates: string[];
  /** Attribute holding the email when the NameID is not one; null: the NameID only. */
  email_attribute: string | null;
  /** Attribute holding the user's groups; null: the IdP grants no role. */
  groups_attribute: string | null;
}

export interface SamlConnection extends SamlSettings {
  tenantId: string;
  emailDomains: string[];
  adminGroup: string | null;
  createdAt: string;
  updatedAt: string;
}

const domainTaken = (domain: string, ownTenant: boolean) =>
  conflict(
    ownTenant
      ? `email domain ${domain} already signs in through this tenant's OpenID Connect connection: remove it there first`
      : `email domain ${domain} already signs in to another tenant`,
    'domain_taken',
  );

export class SamlConnections {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async ofTenant(tenantId: string): Promise<SamlConnection | undefined> {
    const row = await this.#db
      .selectFrom('sso_connections')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('protocol', '=', 'saml')
      .executeTakeFirst();
    if (!row) return undefined;
    const config = JSON.parse(row.config) as SamlSettings;
    return {
      idp_entity_id: config.idp_entity_id,
      sso_url: config.sso_url,
      idp_certificates: config.idp_certificates,
      email_attribute: config.email_attribute ?? null,
      groups_attribute: config.groups_attribute ?? null,
      tenantId: row.tenant_id,
      emailDomains: JSON.parse(row.email_domains) as string[],
      adminGroup: row.admin_group,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  /** The tenant whose SAML connection signs in this email domain, if any. */
  async tenantOfDomain(domain: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('sso_domains')
      .select('tenant_id')
      .where('domain', '=', domain)
      .where('protocol', '=', 'saml')
      .executeTakeFirst();
    return row?.tenant_id;
  }

  /** Creates or replaces the tenant's connection and its domains (409 domain_taken), audited. */
  async save(
    tenantId: string,
    settings: SamlSettings & { emailDomains: string[]; adminGroup: string | null },
    by: { actor: AuditActor; at: Date },
  ): Promise<void> {
    const at = by.at.toISOString();
    try {
      await this.#db.transaction().execute(async (trx) => {
        const taken = await trx
          .selectFrom('sso_domains')
          .select(['domain', 'tenant_id', 'protocol'])
          .where('domain', 'in', settings.emailDomains)
          .execute();
        const other = taken.find((d) => d.tenant_id !== tenantId || d.protocol !== 'saml');
        if (other) throw domainTaken(other.domain, other.tenant_id === tenantId);
        await trx.deleteFrom('sso_domains').where('tenant_id', '=', tenantId).where('protocol', '=', 'saml').execute();
        await trx
          .insertInto('sso_domains')
          .values(settings.emailDomains.map((domain) => ({ domain, tenant_id: tenantId, protocol: 'saml' as const })))
          .execute();
        const row = {
          config: JSON.stringify({
            idp_entity_id: settings.idp_entity_id,
            sso_url: settings.sso_url,
            idp_certificates: settings.idp_certificates,
            email_attribute: settings.email_attribute,
            groups_attribute: settings.groups_attribute,
          } satisfies SamlSettings),
          email_domains: JSON.stringify(settings.emailDomains),
          admin_group: settings.adminGroup,
          updated_at: at,
        };
        await trx
          .insertInto('sso_connections')
          .values({ tenant_id: tenantId, protocol: 'saml', secret_sealed: null, created_at: at, ...row })
          .onConflict((oc) => oc.columns(['tenant_id', 'protocol']).doUpdateSet(row))
          .execute();
        await audit({ db: trx, now: () => by.at }, by.actor, 'saml.update', tenantId, tenantId);
      });
    } catch (error) {
      // Another tenant claimed one of the domains between our check and our insert.
      if (isUniqueViolation(error))
        throw conflict('an email domain was just claimed by another tenant', 'domain_taken');
      throw error;
    }
  }

  /** Removes the tenant's connection and its domains; false when it had none. */
  async remove(tenantId: string, by: { actor: AuditActor; at: Date }): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      await trx.deleteFrom('sso_domains').where('tenant_id', '=', tenantId).where('protocol', '=', 'saml').execute();
      const r = await trx
        .deleteFrom('sso_connections')
        .where('tenant_id', '=', tenantId)
        .where('protocol', '=', 'saml')
        .executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) return false;
      await audit({ db: trx, now: () => by.at }, by.actor, 'saml.delete', tenantId, tenantId);
      return true;
    });
  }
}
