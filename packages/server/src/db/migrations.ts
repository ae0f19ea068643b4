// Versioned migrations, applied in name order by Kysely's Migrator at start-up. A released
// migration is never edited: add a new one.

import { type Kysely, type Migration, Migrator, sql } from 'kysely';

const MIGRATIONS: Record<string, Migration> = {
  '0001_identity_and_bundles': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('tenants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.references('tenants.id'))
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'member', 'support')`))
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createTable('enrollment_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('max_uses', 'integer', (c) => c.notNull())
        .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('revoked_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('agents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('api_key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('hostname', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('agent_version', 'text', (c) => c.notNull())
        .addColumn('enrolled_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createTable('uploads')
        .addColumn('object_key', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('presigned', 'stored', 'registered')`))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('uploads_state_expires').on('uploads').columns(['state', 'expires_at']).execute();
      await db.schema
        .createTable('bundles')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
        .addColumn('object_key', 'text', (c) => c.notNull().unique().references('uploads.object_key'))
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('manifest', 'text', (c) => c.notNull())
        .addColumn('uploaded_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('bundles_tenant_uploaded')
        .on('bundles')
        .columns(['tenant_id', 'uploaded_at'])
        .execute();
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text', (c) => c.notNull())
        .addColumn('actor_role', 'text', (c) => c.notNull())
        .addColumn('tenant_id', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0002_signals_and_webhooks': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('signals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('agent_id', 'text', (c) => c.references('agents.id'))
        .addColumn('server_id', 'text', (c) => c.notNull())
        .addColumn('server_name', 'text', (c) => c.notNull())
        .addColumn('signal_type', 'text', (c) => c.notNull())
        .addColumn('severity', 'integer', (c) => c.notNull().check(sql`severity between 1 and 5`))
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('identity_id', 'text', (c) => c.notNull())
        .addColumn('identity_name', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('received_at', 'text', (c) => c.notNull())
        .addColumn('is_test', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex('signals_tenant_received')
        .on('signals')
        .columns(['tenant_id', 'received_at'])
        .execute();
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('headers', 'text', (c) => c.notNull())
        .addColumn('secret_sealed', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('disabled_reason', 'text')
        .addColumn('failing_since', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('webhook_endpoints_tenant')
        .on('webhook_endpoints')
        .columns(['tenant_id', 'enabled'])
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('signal_id', 'text', (c) => c.notNull().references('signals.id'))
        .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
        .addColumn('state', 'text', (c) =>
          c.notNull().check(sql`state in ('pending', 'delivering', 'succeeded', 'failed')`),
        )
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'text', (c) => c.notNull())
        .addColumn('lease_until', 'text')
        .addColumn('last_status', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('completed_at', 'text')
        .addUniqueConstraint('webhook_deliveries_signal_endpoint', ['signal_id', 'endpoint_id'])
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_due')
        .on('webhook_deliveries')
        .columns(['state', 'next_attempt_at'])
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_endpoint')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('error', 'text')
        .addColumn('response_excerpt', 'text')
        .execute();
      await db.schema
        .createIndex('webhook_attempts_delivery')
        .on('webhook_attempts')
        .columns(['delivery_id', 'attempt'])
        .execute();
    },
  },
  '0003_delivery_claim_index': {
    // The claim reads each endpoint's due deliveries in time order: one index seek per endpoint.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('webhook_deliveries_endpoint_due')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'state', 'next_attempt_at'])
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_lease')
        .on('webhook_deliveries')
        .columns(['state', 'lease_until'])
        .execute();
    },
  },
  '0004_delivery_partial_indexes': {
    // Each delivery used to sit in six indexes; every state change rewrote three of them. The
    // claim and lease scans only ever look at pending or delivering rows: partial indexes hold
    // just those, so a delivered row leaves them for good and ingest writes two fewer entries.
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('webhook_deliveries_due').execute();
      await db.schema.dropIndex('webhook_deliveries_endpoint_due').execute();
      await db.schema.dropIndex('webhook_deliveries_lease').execute();
      await db.schema
        .createIndex('webhook_deliveries_pending')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'next_attempt_at'])
        .where(sql.ref('state'), '=', 'pending')
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_leased')
        .on('webhook_deliveries')
        .column('lease_until')
        .where(sql.ref('state'), '=', 'delivering')
        .execute();
    },
  },
  '0005_console_sessions_and_users': {
    // The console (issue 10): browser sessions, one-time set-password links, when a user last
    // signed in, when an agent was last seen, and the indexes the console's lists page over.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('users').addColumn('last_login_at', 'text').execute();
      await db.schema.alterTable('agents').addColumn('last_seen_at', 'text').execute();
      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_seen_at', 'text', (c) => c.notNull())
        .addColumn('idle_expires_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .addColumn('ip', 'text', (c) => c.notNull())
        .addColumn('user_agent', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_user').on('sessions').columns(['user_id', 'created_at']).execute();
      await db.schema
        .createTable('password_links')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('used_at', 'text')
        .execute();
      await db.schema.createIndex('password_links_user').on('password_links').column('user_id').execute();
      await db.schema.createIndex('api_tokens_user').on('api_tokens').column('user_id').execute();
      await db.schema.createIndex('audit_log_tenant_at').on('audit_log').columns(['tenant_id', 'at']).execute();
      await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
      await db.schema.createIndex('webhook_deliveries_signal').on('webhook_deliveries').column('signal_id').execute();
    },
  },
  '0006_bundle_requests_and_insights': {
    // Console-pushed bundles and their insights (issue 12): the tenant's consent to
    // support-initiated collection, the daemon's heartbeat, bundle requests with a timestamp
    // per state, and the analysis queue of stored bundles (a row per bundle, claimed with a lease).
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('tenants')
        .addColumn('allow_support_collection', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('agents').addColumn('uptime_seconds', 'integer').execute();
      await db.schema.alterTable('agents').addColumn('agent_uptime_seconds', 'integer').execute();
      await db.schema.alterTable('agents').addColumn('last_heartbeat_at', 'text').execute();
      await db.schema
        .createTable('bundle_requests')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
        .addColumn('state', 'text', (c) =>
          c
            .notNull()
            .check(
              sql`state in ('queued', 'delivered', 'collecting', 'uploading', 'done', 'failed', 'expired', 'interrupted')`,
            ),
        )
        .addColumn('requested_by', 'text', (c) => c.notNull())
        .addColumn('requested_by_role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('delivered_at', 'text')
        .addColumn('deliveries', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('acknowledged_at', 'text')
        .addColumn('collecting_at', 'text')
        .addColumn('uploading_at', 'text')
        .addColumn('finished_at', 'text')
        .addColumn('bundle_id', 'text')
        .addColumn('error_code', 'text')
        .addColumn('error_message', 'text')
        .addColumn('error_step', 'text')
        .addColumn('reason', 'text')
        .execute();
      await db.schema
        .createIndex('bundle_requests_agent_state')
        .on('bundle_requests')
        .columns(['agent_id', 'state'])
        .execute();
      await db.schema
        .createIndex('bundle_requests_tenant_created')
        .on('bundle_requests')
        .columns(['tenant_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('bundle_requests_state_expires')
        .on('bundle_requests')
        .columns(['state', 'expires_at'])
        .execute();
      await db.schema
        .createTable('bundle_insights')
        .addColumn('bundle_id', 'text', (c) => c.primaryKey().references('bundles.id'))
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
        .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'running', 'done', 'failed')`))
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_until', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .addColumn('findings', 'text')
        .addColumn('summary', 'text')
        .execute();
      await db.schema
        .createIndex('bundle_insights_state')
        .on('bundle_insights')
        .columns(['state', 'created_at'])
        .execute();
      await db.schema
        .createIndex('bundle_insights_agent')
        .on('bundle_insights')
        .columns(['agent_id', 'created_at'])
        .execute();
    },
  },
  '0007_queue_earlier_bundles_for_insights': {
    // Bundles registered before insights existed are queued for analysis too.
    async up(db: Kysely<unknown>) {
      await (db as Kysely<Record<string, Record<string, unknown>>>)
        .insertInto('bundle_insights')
        .columns(['bundle_id', 'tenant_id', 'agent_id', 'state', 'attempts', 'created_at'])
        .expression((eb) =>
          eb
            .selectFrom('bundles')
            .select([
              'bundles.id',
              'bundles.tenant_id',
              'bundles.agent_id',
              sql<string>`${'pending'}`.as('state'),
              sql<number>`${0}`.as('attempts'),
              'bundles.uploaded_at as created_at',
            ]),
        )
        .execute();
    },
  },
};

export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
}
