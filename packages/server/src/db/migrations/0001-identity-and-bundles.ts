// The first schema: tenants, users and their API tokens, enrollment tokens, agents, uploads,
// bundles and the audit log.

import { type Kysely, type Migration, sql } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function identityAndBundles(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('tenants')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('name', t.text, (c) => c.notNull())
        .addColumn('created_at', t.text, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('users')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('tenant_id', t.text, (c) => c.references('tenants.id'))
        .addColumn('email', t.text, (c) => c.notNull().unique())
        .addColumn('role', t.text, (c) => c.notNull().check(sql`role in ('admin', 'member', 'support')`))
        .addColumn('password_hash', t.text, (c) => c.notNull())
        .addColumn('created_at', t.text, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_tokens')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('user_id', t.text, (c) => c.notNull().references('users.id'))
        .addColumn('token_hash', t.text, (c) => c.notNull().unique())
        .addColumn('name', t.text, (c) => c.notNull())
        .addColumn('created_at', t.text, (c) => c.notNull())
        .addColumn('revoked_at', t.text)
        .execute();
      await db.schema
        .createTable('enrollment_tokens')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id'))
        .addColumn('token_hash', t.text, (c) => c.notNull().unique())
        .addColumn('expires_at', t.text, (c) => c.notNull())
        .addColumn('max_uses', 'integer', (c) => c.notNull())
        .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('revoked_at', t.text)
        .addColumn('created_at', t.text, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('agents')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id'))
        .addColumn('api_key_hash', t.text, (c) => c.notNull().unique())
        .addColumn('hostname', t.text, (c) => c.notNull())
        .addColumn('environment', t.text, (c) => c.notNull())
        .addColumn('agent_version', t.text, (c) => c.notNull())
        .addColumn('enrolled_at', t.text, (c) => c.notNull())
        .addColumn('revoked_at', t.text)
        .execute();
      await db.schema
        .createTable('uploads')
        .addColumn('object_key', t.text, (c) => c.primaryKey())
        .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id'))
        .addColumn('agent_id', t.text, (c) => c.notNull().references('agents.id'))
        .addColumn('filename', t.text, (c) => c.notNull())
        .addColumn('size', t.bigint, (c) => c.notNull())
        .addColumn('sha256', t.text, (c) => c.notNull())
        .addColumn('expires_at', t.text, (c) => c.notNull())
        .addColumn('state', t.text, (c) => c.notNull().check(sql`state in ('presigned', 'stored', 'registered')`))
        .addColumn('created_at', t.text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('uploads_state_expires').on('uploads').columns(['state', 'expires_at']).execute();
      await db.schema
        .createTable('bundles')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id'))
        .addColumn('agent_id', t.text, (c) => c.notNull().references('agents.id'))
        .addColumn('object_key', t.text, (c) => c.notNull().unique().references('uploads.object_key'))
        .addColumn('filename', t.text, (c) => c.notNull())
        .addColumn('size', t.bigint, (c) => c.notNull())
        .addColumn('sha256', t.text, (c) => c.notNull())
        .addColumn('manifest', t.text, (c) => c.notNull())
        .addColumn('uploaded_at', t.text, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('bundles_tenant_uploaded')
        .on('bundles')
        .columns(['tenant_id', 'uploaded_at'])
        .execute();
      await db.schema
        .createTable('audit_log')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('at', t.text, (c) => c.notNull())
        .addColumn('actor_id', t.text, (c) => c.notNull())
        .addColumn('actor_role', t.text, (c) => c.notNull())
        .addColumn('tenant_id', t.text)
        .addColumn('action', t.text, (c) => c.notNull())
        .addColumn('target', t.text, (c) => c.notNull())
        .execute();
    },
  };
}
