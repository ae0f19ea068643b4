// Issue 22: sign-in a security team can adopt. Everything the identity work stores, in one
// migration (expand only: every column is new and nullable or defaulted):
// - users: a TOTP second factor (the secret sealed under the master key; the one being set
//   up kept apart until confirmed; the last accepted 30 s step, so a code is accepted once),
//   SCIM's externalId and display name, and deactivation (SCIM `active: false`);
// - mfa_recovery_codes: ten single-use codes per user, as SHA-256;
// - webauthn_credentials: passkeys (public key, signature counter, transports);
// - auth_flows: the state of a sign-in between two requests (an MFA step, an OIDC or SAML
//   round trip, a WebAuthn challenge), kept in the database so that any replica can answer
//   the next step; the token or state is stored as its SHA-256, each flow is used once;
// - sso_connections and sso_domains: a tenant's OpenID Connect or SAML identity provider and
//   the email domains that route to it (a domain belongs to one tenant);
// - tenants.require_mfa and tenants.sso_only (DESIGN §6);
// - api_tokens: scopes, an expiry and the time last used;
// - scim_tokens, scim_groups, scim_group_members: SCIM 2.0 provisioning;
// - sessions.method: how the session was signed in (password, totp, passkey, oidc, saml…).

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function identity(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      for (const column of ['totp_secret_sealed', 'totp_pending_sealed', 'totp_enabled_at', 'external_id'])
        await db.schema.alterTable('users').addColumn(column, t.text).execute();
      await db.schema.alterTable('users').addColumn('totp_last_step', t.bigint).execute();
      await db.schema.alterTable('users').addColumn('display_name', t.text).execute();
      await db.schema.alterTable('users').addColumn('deactivated_at', t.text).execute();

      await db.schema
        .createTable('mfa_recovery_codes')
        .addColumn('user_id', t.text, (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('code_hash', t.text, (c) => c.notNull())
        .addColumn('used_at', t.text)
        .addPrimaryKeyConstraint('mfa_recovery_codes_pk', ['user_id', 'code_hash'])
        .execute();

      await db.schema
        .createTable('webauthn_credentials')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('user_id', t.text, (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', t.text, (c) => c.notNull())
        .addColumn('public_key', t.text, (c) => c.notNull())
        .addColumn('counter', t.bigint, (c) => c.notNull().defaultTo(0))
        .addColumn('transports', t.text, (c) => c.notNull().defaultTo('[]'))
        .addColumn('device_type', t.text, (c) => c.notNull())
        .addColumn('backed_up', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', t.text, (c) => c.notNull())
        .addColumn('last_used_at', t.text)
        .execute();
      await db.schema.createIndex('webauthn_credentials_user').on('webauthn_credentials').column('user_id').execute();

      await db.schema
        .createTable('auth_flows')
        .addColumn('id_hash', t.text, (c) => c.primaryKey())
        .addColumn('kind', t.text, (c) => c.notNull())
        .addColumn('tenant_id', t.text)
        .addColumn('user_id', t.text)
        .addColumn('data', t.text, (c) => c.notNull().defaultTo('{}'))
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', t.text, (c) => c.notNull())
        .addColumn('expires_at', t.text, (c) => c.notNull())
        .addColumn('used_at', t.text)
        .execute();
      await db.schema.createIndex('auth_flows_expires').on('auth_flows').column('expires_at').execute();

      await db.schema
        .createTable('sso_connections')
        .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('protocol', t.text, (c) => c.notNull())
        .addColumn('config', t.text, (c) => c.notNull())
        .addColumn('secret_sealed', t.text)
        .addColumn('email_domains', t.text, (c) => c.notNull())
        .addColumn('admin_group', t.text)
        .addColumn('created_at', t.text, (c) => c.notNull())
        .addColumn('updated_at', t.text, (c) => c.notNull())
        .addPrimaryKeyConstraint('sso_connections_pk', ['tenant_id', 'protocol'])
        .execute();
      await db.schema
        .createTable('sso_domains')
        .addColumn('domain', t.text, (c) => c.primaryKey())
        .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('protocol', t.text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sso_domains_tenant').on('sso_domains').column('tenant_id').execute();

      await db.schema
        .alterTable('tenants')
        .addColumn('require_mfa', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('tenants')
        .addColumn('sso_only', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();

      await db.schema.alterTable('api_tokens').addColumn('scopes', t.text).execute();
      await db.schema.alterTable('api_tokens').addColumn('expires_at', t.text).execute();
      await db.schema.alterTable('api_tokens').addColumn('last_used_at', t.text).execute();

      await db.schema
        .createTable('scim_tokens')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('token_hash', t.text, (c) => c.notNull().unique())
        .addColumn('name', t.text, (c) => c.notNull())
        .addColumn('created_at', t.text, (c) => c.notNull())
        .addColumn('last_used_at', t.text)
        .addColumn('revoked_at', t.text)
        .execute();
      await db.schema.createIndex('scim_tokens_tenant').on('scim_tokens').column('tenant_id').execute();
      await db.schema
        .createTable('scim_groups')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('display_name', t.text, (c) => c.notNull())
        .addColumn('external_id', t.text)
        .addColumn('created_at', t.text, (c) => c.notNull())
        .addColumn('updated_at', t.text, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('scim_groups_tenant_name')
        .on('scim_groups')
        .columns(['tenant_id', 'display_name'])
        .unique()
        .execute();
      await db.schema
        .createTable('scim_group_members')
        .addColumn('group_id', t.text, (c) => c.notNull().references('scim_groups.id').onDelete('cascade'))
        .addColumn('user_id', t.text, (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('scim_group_members_pk', ['group_id', 'user_id'])
        .execute();
      await db.schema.createIndex('scim_group_members_user').on('scim_group_members').column('user_id').execute();

      await db.schema.alterTable('sessions').addColumn('method', t.text).execute();
    },
  };
}
