// Versioned migrations, applied in name order by Kysely's Migrator: one history for both
// engines (docs/decisions/0009-postgresql.md). A released migration is never edited in what
// it does to a database it already ran on: add a new one.
//
// Rules, for every migration (the same test suite runs on both engines):
// - Kysely's schema builder; where the engines differ, branch on `engine` inside the
//   migration, never in a separate history. SQLite's branch is what the migration always did.
// - Text columns through `t.text` (PostgreSQL: `text collate "C"`, byte order like SQLite's,
//   so sorting, keyset pagination and range scans agree on both); byte sizes and any count
//   that can pass 2^31 through `t.bigint` (SQLite's `integer` is already 64-bit).
// - Timestamps are RFC 3339 UTC text; booleans are integer 0/1, as on SQLite.
// - On PostgreSQL a migration runs while older replicas still serve: add, never rename or
//   drop in the same release (expand, then contract a release later).
// - webhook_deliveries and webhook_attempts are partitioned on PostgreSQL: a unique index or
//   a foreign key *to* them must include `id` (the partition key).

import { type Kysely, type Migration, Migrator, type RawBuilder, sql } from 'kysely';
import type { Engine } from './engine.ts';

interface ColumnTypes {
  text: 'text' | RawBuilder<unknown>;
  bigint: 'integer' | 'bigint';
}

function columnTypes(engine: Engine): ColumnTypes {
  return engine === 'postgres'
    ? { text: sql`text collate "C"`, bigint: 'bigint' }
    : { text: 'text', bigint: 'integer' };
}

function migrations(engine: Engine): Record<string, Migration> {
  const t = columnTypes(engine);
  const pg = engine === 'postgres';
  return {
    '0001_identity_and_bundles': {
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
    },
    '0002_signals_and_webhooks': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('signals')
          .addColumn('id', t.text, (c) => c.primaryKey())
          .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id'))
          .addColumn('agent_id', t.text, (c) => c.references('agents.id'))
          .addColumn('server_id', t.text, (c) => c.notNull())
          .addColumn('server_name', t.text, (c) => c.notNull())
          .addColumn('signal_type', t.text, (c) => c.notNull())
          .addColumn('severity', 'integer', (c) => c.notNull().check(sql`severity between 1 and 5`))
          .addColumn('description', t.text, (c) => c.notNull())
          .addColumn('identity_id', t.text, (c) => c.notNull())
          .addColumn('identity_name', t.text, (c) => c.notNull())
          .addColumn('environment', t.text, (c) => c.notNull())
          .addColumn('created_at', t.text, (c) => c.notNull())
          .addColumn('received_at', t.text, (c) => c.notNull())
          .addColumn('is_test', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema
          .createIndex('signals_tenant_received')
          .on('signals')
          .columns(['tenant_id', 'received_at'])
          .execute();
        await db.schema
          .createTable('webhook_endpoints')
          .addColumn('id', t.text, (c) => c.primaryKey())
          .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id'))
          .addColumn('name', t.text, (c) => c.notNull())
          .addColumn('url', t.text, (c) => c.notNull())
          .addColumn('headers', t.text, (c) => c.notNull())
          .addColumn('secret_sealed', t.text, (c) => c.notNull())
          .addColumn('enabled', 'integer', (c) => c.notNull())
          .addColumn('disabled_reason', t.text)
          .addColumn('failing_since', t.text)
          .addColumn('created_at', t.text, (c) => c.notNull())
          .addColumn('updated_at', t.text, (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('webhook_endpoints_tenant')
          .on('webhook_endpoints')
          .columns(['tenant_id', 'enabled'])
          .execute();
        // PostgreSQL: partitioned by month of their time-ordered ids (retention drops whole
        // months: retention.ts). A unique constraint there must hold the partition key, so the
        // one-delivery-per-(signal, endpoint) rule is kept by the outbox (a signal and its
        // deliveries are inserted once, together) and indexed without UNIQUE.
        const deliveries = db.schema
          .createTable('webhook_deliveries')
          .addColumn('id', t.text, (c) => c.primaryKey())
          .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id'))
          .addColumn('signal_id', t.text, (c) => c.notNull().references('signals.id'))
          .addColumn('endpoint_id', t.text, (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
          .addColumn('state', t.text, (c) =>
            c.notNull().check(sql`state in ('pending', 'delivering', 'succeeded', 'failed')`),
          )
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('next_attempt_at', t.text, (c) => c.notNull())
          .addColumn('lease_until', t.text)
          .addColumn('last_status', 'integer')
          .addColumn('last_error', t.text)
          .addColumn('created_at', t.text, (c) => c.notNull())
          .addColumn('completed_at', t.text);
        if (pg) {
          await deliveries.modifyEnd(sql`partition by range (id)`).execute();
          await sql`create table webhook_deliveries_default partition of webhook_deliveries default`.execute(db);
          await db.schema
            .createIndex('webhook_deliveries_signal_endpoint')
            .on('webhook_deliveries')
            .columns(['signal_id', 'endpoint_id'])
            .execute();
        } else
          await deliveries
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
        // PostgreSQL: partitioned like the deliveries, by the month its (time-ordered) id was
        // made, which is when the attempt started; no foreign key to a partitioned delivery
        // (whose month may differ): the endpoint's deletion and retention remove attempts
        // explicitly.
        const attempts = db.schema
          .createTable('webhook_attempts')
          .addColumn('id', t.text, (c) => c.primaryKey())
          .addColumn('delivery_id', t.text, (c) =>
            pg ? c.notNull() : c.notNull().references('webhook_deliveries.id').onDelete('cascade'),
          )
          .addColumn('tenant_id', t.text, (c) => c.notNull())
          .addColumn('attempt', 'integer', (c) => c.notNull())
          .addColumn('started_at', t.text, (c) => c.notNull())
          .addColumn('duration_ms', 'integer', (c) => c.notNull())
          .addColumn('status', 'integer')
          .addColumn('error', t.text)
          .addColumn('response_excerpt', t.text);
        if (pg) {
          await attempts.modifyEnd(sql`partition by range (id)`).execute();
          await sql`create table webhook_attempts_default partition of webhook_attempts default`.execute(db);
        } else await attempts.execute();
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
        // Replicas share the per-endpoint limit: a claim counts the endpoint's live leases.
        if (pg)
          await db.schema
            .createIndex('webhook_deliveries_leased_endpoint')
            .on('webhook_deliveries')
            .columns(['endpoint_id', 'lease_until'])
            .where(sql.ref('state'), '=', 'delivering')
            .execute();
      },
    },
    '0005_console_sessions_and_users': {
      // The console (issue 10): browser sessions, one-time set-password links, when a user last
      // signed in, when an agent was last seen, and the indexes the console's lists page over.
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
    },
    '0006_delivery_lease_holder': {
      // Which process holds a lease. Replicas sharing PostgreSQL count the live leases the
      // others hold against an endpoint's limit, and their own attempts from memory. Null on
      // SQLite, whose one process owns every lease.
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('webhook_deliveries').addColumn('leased_by', t.text).execute();
      },
    },
    '0007_bundle_requests_and_insights': {
      // Console-pushed bundles and their insights (issue 12): the tenant's consent to
      // support-initiated collection, the daemon's heartbeat, bundle requests with a timestamp
      // per state, and the analysis queue of stored bundles (a row per bundle, claimed with a lease).
      async up(db: Kysely<unknown>) {
        await db.schema
          .alterTable('tenants')
          .addColumn('allow_support_collection', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema.alterTable('agents').addColumn('uptime_seconds', t.bigint).execute();
        await db.schema.alterTable('agents').addColumn('agent_uptime_seconds', t.bigint).execute();
        await db.schema.alterTable('agents').addColumn('last_heartbeat_at', t.text).execute();
        await db.schema
          .createTable('bundle_requests')
          .addColumn('id', t.text, (c) => c.primaryKey())
          .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id'))
          .addColumn('agent_id', t.text, (c) => c.notNull().references('agents.id'))
          .addColumn('state', t.text, (c) =>
            c
              .notNull()
              .check(
                sql`state in ('queued', 'delivered', 'collecting', 'uploading', 'done', 'failed', 'expired', 'interrupted')`,
              ),
          )
          .addColumn('requested_by', t.text, (c) => c.notNull())
          .addColumn('requested_by_role', t.text, (c) => c.notNull())
          .addColumn('created_at', t.text, (c) => c.notNull())
          .addColumn('expires_at', t.text, (c) => c.notNull())
          .addColumn('delivered_at', t.text)
          .addColumn('deliveries', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('acknowledged_at', t.text)
          .addColumn('collecting_at', t.text)
          .addColumn('uploading_at', t.text)
          .addColumn('finished_at', t.text)
          .addColumn('bundle_id', t.text)
          .addColumn('error_code', t.text)
          .addColumn('error_message', t.text)
          .addColumn('error_step', t.text)
          .addColumn('reason', t.text)
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
          .addColumn('bundle_id', t.text, (c) => c.primaryKey().references('bundles.id'))
          .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id'))
          .addColumn('agent_id', t.text, (c) => c.notNull().references('agents.id'))
          .addColumn('state', t.text, (c) => c.notNull().check(sql`state in ('pending', 'running', 'done', 'failed')`))
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('lease_until', t.text)
          .addColumn('created_at', t.text, (c) => c.notNull())
          .addColumn('finished_at', t.text)
          .addColumn('findings', t.text)
          .addColumn('summary', t.text)
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
    '0008_queue_earlier_bundles_for_insights': {
      // Bundles registered before insights existed are queued for analysis too (literals, not
      // parameters: PostgreSQL types an INSERT … SELECT's parameters as text).
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
                sql.lit('pending').as('state'),
                sql.lit(0).as('attempts'),
                'bundles.uploaded_at as created_at',
              ]),
          )
          .execute();
      },
    },
    '0009_rotation_retention_tracing': {
      // Issue 14, items 1, 6 and 7. Secret rotation: the secret being replaced, sealed like the
      // current one, kept until its grace period ends (then erased), and the test event that
      // proves the new one. Each attempt records the Guard-Signature and traceparent it was
      // sent with (the attempt view shows them as sent, whatever the secret is now). A signal
      // keeps the agent's traceparent, and when its payload was erased. A tenant may keep its
      // delivery log for fewer days than the server's default (or more, up to its maximum).
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('webhook_endpoints').addColumn('previous_secret_sealed', t.text).execute();
        await db.schema.alterTable('webhook_endpoints').addColumn('previous_secret_expires_at', t.text).execute();
        await db.schema.alterTable('webhook_endpoints').addColumn('rotation_started_at', t.text).execute();
        await db.schema.alterTable('webhook_endpoints').addColumn('rotation_proof_signal_id', t.text).execute();
        await db.schema.alterTable('webhook_attempts').addColumn('signature', t.text).execute();
        await db.schema.alterTable('webhook_attempts').addColumn('traceparent', t.text).execute();
        await db.schema.alterTable('signals').addColumn('traceparent', t.text).execute();
        await db.schema.alterTable('signals').addColumn('erased_at', t.text).execute();
        await db.schema.alterTable('tenants').addColumn('delivery_retention_days', 'integer').execute();
      },
    },
    '0010_webhook_subscriptions_replays_rates': {
      // Issue 14, items 2–5. Endpoints choose their event types (a bit mask: subscriptions.ts)
      // and, for signals, a minimum severity and signal types; an optional rate limit; their
      // failing streak counts attempts and remembers which alert thresholds it announced.
      // Signals carry an event type: operational events (endpoint.failing, endpoint.disabled)
      // are synthetic rows like test events, their payload's data frozen in event_data.
      // Deliveries re-queued by a replay name it; replays are jobs of their own. Two tables
      // the hot paths write: a rate limit's state per endpoint (the claim, under the
      // endpoint's claim lock) and attempt counts per endpoint and hour (the outcome writer).
      async up(db: Kysely<unknown>) {
        const endpoints = () => db.schema.alterTable('webhook_endpoints');
        await endpoints()
          .addColumn('event_mask', 'integer', (c) => c.notNull().defaultTo(3))
          .execute();
        await endpoints()
          .addColumn('min_severity', 'integer', (c) => c.notNull().defaultTo(1))
          .execute();
        await endpoints().addColumn('signal_types', t.text).execute();
        await endpoints()
          .addColumn('rate_limit', pg ? 'double precision' : 'real')
          .execute();
        await endpoints()
          .addColumn('failure_streak', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await endpoints()
          .addColumn('failing_alerted', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema
          .alterTable('signals')
          .addColumn('event_type', t.text, (c) => c.notNull().defaultTo('signal_created'))
          .execute();
        await db.schema.alterTable('signals').addColumn('event_data', t.text).execute();
        await db.schema.alterTable('webhook_deliveries').addColumn('replay_id', t.text).execute();
        await db.schema
          .createTable('webhook_replays')
          .addColumn('id', t.text, (c) => c.primaryKey())
          .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id'))
          .addColumn('endpoint_id', t.text, (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
          .addColumn('requested_by', t.text, (c) => c.notNull())
          .addColumn('status', t.text)
          .addColumn('since', t.text, (c) => c.notNull())
          .addColumn('until', t.text, (c) => c.notNull())
          .addColumn('state', t.text, (c) => c.notNull().check(sql`state in ('running', 'done', 'cancelled')`))
          .addColumn('total', 'integer', (c) => c.notNull())
          .addColumn('queued', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('cursor_at', t.text)
          .addColumn('cursor_id', t.text)
          .addColumn('fed_at', t.text)
          .addColumn('created_at', t.text, (c) => c.notNull())
          .addColumn('finished_at', t.text)
          .addColumn('error', t.text)
          .execute();
        await db.schema
          .createIndex('webhook_replays_endpoint')
          .on('webhook_replays')
          .columns(['endpoint_id', 'created_at'])
          .execute();
        // One running replay per endpoint.
        await db.schema
          .createIndex('webhook_replays_running')
          .on('webhook_replays')
          .column('endpoint_id')
          .unique()
          .where(sql.ref('state'), '=', 'running')
          .execute();
        await db.schema
          .createIndex('webhook_deliveries_replay')
          .on('webhook_deliveries')
          .columns(['replay_id', 'state'])
          .where(sql.ref('replay_id'), 'is not', null)
          .execute();
        await db.schema
          .createTable('webhook_endpoint_rates')
          .addColumn('endpoint_id', t.text, (c) =>
            c.primaryKey().references('webhook_endpoints.id').onDelete('cascade'),
          )
          .addColumn('tat_ms', t.bigint, (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('webhook_endpoint_stats')
          .addColumn('endpoint_id', t.text, (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
          .addColumn('hour', t.text, (c) => c.notNull())
          .addColumn('succeeded', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
          .addPrimaryKeyConstraint('webhook_endpoint_stats_pk', ['endpoint_id', 'hour'])
          .execute();
      },
    },
    '0011_detection': {
      // Issue 18, items 2 and 3. A signal may carry the agent's idempotency key: unique per
      // agent, so a retried POST (or two replicas taking the same one at once) makes one signal;
      // the key lives as long as its signal row. The newest signal of a server is read by
      // (agent_id, received_at). The daemon's heartbeat reports its detectors (JSON) and spool.
      // A tenant's detection policy: per signal type enabled and a severity override (JSON),
      // with a revision that every change bumps (the version agents compare).
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('signals').addColumn('idempotency_key', t.text).execute();
        await db.schema
          .createIndex('signals_agent_idempotency_key')
          .on('signals')
          .columns(['agent_id', 'idempotency_key'])
          .unique()
          .where(sql.ref('idempotency_key'), 'is not', null)
          .execute();
        await db.schema
          .createIndex('signals_agent_received')
          .on('signals')
          .columns(['agent_id', 'received_at'])
          .execute();
        await db.schema.alterTable('agents').addColumn('detectors', t.text).execute();
        await db.schema.alterTable('agents').addColumn('spool_depth', 'integer').execute();
        await db.schema
          .createTable('detection_policies')
          .addColumn('tenant_id', t.text, (c) => c.primaryKey().references('tenants.id'))
          .addColumn('signal_types', t.text, (c) => c.notNull())
          .addColumn('revision', 'integer', (c) => c.notNull())
          .addColumn('updated_at', t.text, (c) => c.notNull())
          .execute();
      },
    },
    '0012_one_open_bundle_request': {
      // Issue 19, finding 3. One open bundle request per server, kept by a partial unique index
      // on the open states (those of bundle-requests-repository.ts' OPEN_STATES, frozen here):
      // the check-then-insert alone let concurrent requests on PostgreSQL open up to four.
      // A database that already holds several open requests of a server keeps the newest
      // (created_at, then id) and closes the others first, as `interrupted` with a reason saying
      // why (an agent still working on one of them gets 409 request_finished at its next report).
      // Replicas of the previous release still check before they insert; one that loses the
      // race to the index answers 500 instead of opening a second request.
      async up(db: Kysely<unknown>) {
        const now = new Date().toISOString();
        await sql`
          update bundle_requests set state = 'interrupted', finished_at = ${now},
            reason = 'closed by the upgrade to one open request per server: a newer request of this server is open'
          where state in ('queued', 'delivered', 'collecting', 'uploading')
            and exists (select 1 from bundle_requests newer
                        where newer.agent_id = bundle_requests.agent_id
                          and newer.state in ('queued', 'delivered', 'collecting', 'uploading')
                          and (newer.created_at > bundle_requests.created_at
                               or (newer.created_at = bundle_requests.created_at and newer.id > bundle_requests.id)))
        `.execute(db);
        await db.schema
          .createIndex('bundle_requests_one_open')
          .on('bundle_requests')
          .column('agent_id')
          .unique()
          .where(sql.ref('state'), 'in', ['queued', 'delivered', 'collecting', 'uploading'])
          .execute();
      },
    },
    '0013_login_failures': {
      // Failed sign-ins counted in the database, so every replica sees them (issue 19): a row
      // per failure and key (account and address, account, address), the key a SHA-256.
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('login_failures')
          .addColumn('key_hash', t.text, (c) => c.notNull())
          .addColumn('at', t.text, (c) => c.notNull())
          .execute();
        await db.schema.createIndex('login_failures_key').on('login_failures').columns(['key_hash', 'at']).execute();
        await db.schema.createIndex('login_failures_at').on('login_failures').column('at').execute();
      },
    },
    '0014_fair_analysis_queue': {
      // Bundles are taken for analysis tenant by tenant (issue 19): the next is the oldest
      // queued bundle of the tenant whose last analysis started longest ago, so one tenant's
      // flood of uploads waits behind everyone else's one bundle.
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('bundle_insights').addColumn('claimed_at', t.text).execute();
        await db.schema
          .createIndex('bundle_insights_tenant_claimed')
          .on('bundle_insights')
          .columns(['tenant_id', 'claimed_at'])
          .execute();
      },
    },
    '0015_emails_per_tenant': {
      // An email is unique within its tenant, no longer across the service (issue 19, finding
      // 7): an admin adding a user learns nothing of other tenants and cannot squat an address
      // another tenant will need. Vendor staff (no tenant) stay unique among themselves. Sign-in
      // finds the account by email and password (auth/sessions). Relaxing a constraint is safe
      // while older replicas serve: their "email taken" still comes from a unique violation.
      async up(db: Kysely<unknown>) {
        if (pg) await sql`alter table users drop constraint users_email_key`.execute(db);
        else await rebuildWithoutUniqueEmail(db);
        await db.schema
          .createIndex('users_tenant_email')
          .on('users')
          .columns(['tenant_id', 'email'])
          .unique()
          .where(sql.ref('tenant_id'), 'is not', null)
          .execute();
        await db.schema
          .createIndex('users_staff_email')
          .on('users')
          .column('email')
          .unique()
          .where(sql.ref('tenant_id'), 'is', null)
          .execute();
        await db.schema.createIndex('users_email').on('users').column('email').execute();
      },
    },
  };
}

/**
 * SQLite cannot drop a column's UNIQUE: the users table is made again without it (SQLite's
 * "generalized ALTER TABLE" procedure: foreign keys off meanwhile, the copy in one transaction,
 * foreign_key_check before they come back on). Kysely runs SQLite's migrations outside a
 * transaction, so the pragma takes effect here.
 */
async function rebuildWithoutUniqueEmail(db: Kysely<unknown>): Promise<void> {
  const row = (
    await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'users'`.execute(db)
  ).rows[0];
  const unique = '"email" text not null unique';
  if (!row?.sql.includes(unique)) throw new Error(`the users table is not as migration 0015 expects: ${row?.sql}`);
  const create = row.sql
    .replace('CREATE TABLE "users"', 'CREATE TABLE "users_0015"')
    .replace(unique, '"email" text not null');
  await sql`PRAGMA foreign_keys = OFF`.execute(db);
  try {
    await db.transaction().execute(async (trx) => {
      await sql.raw(create).execute(trx);
      await sql`insert into users_0015 select * from users`.execute(trx);
      await sql`drop table users`.execute(trx);
      await sql`alter table users_0015 rename to users`.execute(trx);
      const broken = await sql`PRAGMA foreign_key_check`.execute(trx);
      if (broken.rows.length > 0)
        throw new Error(`foreign keys broken by the users rebuild: ${JSON.stringify(broken.rows)}`);
    });
  } finally {
    await sql`PRAGMA foreign_keys = ON`.execute(db);
  }
}

/** Every migration's name, in order (the same on both engines). */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrations('sqlite'));

function migrator(db: Kysely<unknown>, engine: Engine): Migrator {
  const all = migrations(engine);
  return new Migrator({ db, provider: { getMigrations: async () => all } });
}

/** Names of the migrations this release has that the database has not run, in order. */
export async function pendingMigrations(db: Kysely<unknown>, engine: Engine): Promise<string[]> {
  const known = await migrator(db, engine).getMigrations();
  return known.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/**
 * Applies the pending migrations. On PostgreSQL Kysely holds an advisory lock meanwhile and
 * runs them in one transaction, so replicas or `migrate` commands started together apply each
 * once. Migrations a newer release ran (a rolling upgrade's first replicas) are left alone.
 */
export async function migrateToLatest(db: Kysely<unknown>, engine: Engine): Promise<string[]> {
  const { error, results } = await migrator(db, engine).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Applies the pending migrations up to `name`, included: tests of a migration on the data it meets. */
export async function migrateTo(db: Kysely<unknown>, engine: Engine, name: string): Promise<void> {
  const { error, results } = await migrator(db, engine).migrateTo(name);
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
}
