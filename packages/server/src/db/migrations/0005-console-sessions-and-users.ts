// The console (issue 10): browser sessions, one-time set-password links, when a user last
// signed in, when an agent was last seen, and the indexes the console's lists page over.

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function consoleSessionsAndUsers(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('users').addColumn('last_login_at', t.text).execute();
      await db.schema.alterTable('agents').addColumn('last_seen_at', t.text).execute();
      await db.schema
        .createTable('sessions')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('user_id', t.text, (c) => c.notNull().references('users.id'))
        .addColumn('token_hash', t.text, (c) => c.notNull().unique())
        .addColumn('created_at', t.text, (c) => c.notNull())
        .addColumn('last_seen_at', t.text, (c) => c.notNull())
        .addColumn('idle_expires_at', t.text, (c) => c.notNull())
        .addColumn('expires_at', t.text, (c) => c.notNull())
        .addColumn('revoked_at', t.text)
        .addColumn('ip', t.text, (c) => c.notNull())
        .addColumn('user_agent', t.text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_user').on('sessions').columns(['user_id', 'created_at']).execute();
      await db.schema
        .createTable('password_links')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('user_id', t.text, (c) => c.notNull().references('users.id'))
        .addColumn('token_hash', t.text, (c) => c.notNull().unique())
        .addColumn('created_at', t.text, (c) => c.notNull())
        .addColumn('expires_at', t.text, (c) => c.notNull())
        .addColumn('used_at', t.text)
        .execute();
      await db.schema.createIndex('password_links_user').on('password_links').column('user_id').execute();
      await db.schema.createIndex('api_tokens_user').on('api_tokens').column('user_id').execute();
      await db.schema.createIndex('audit_log_tenant_at').on('audit_log').columns(['tenant_id', 'at']).execute();
      await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
      await db.schema.createIndex('webhook_deliveries_signal').on('webhook_deliveries').column('signal_id').execute();
    },
  };
}
