// Versioned migrations, applied in name order by Kysely's Migrator: one history for both
// engines (docs/decisions/0009-postgresql.md). A released migration is never edited in what
// it does to a database it already ran on: add a new one. Nor is its name: a database records
// the names it ran.
//
// One file per migration in migrations/, named after it (`0015_emails_per_tenant` is
// `0015-emails-per-tenant.ts`), exporting `(engine) => Migration`; MIGRATIONS below lists
// them in order (test/schema.test.ts checks that every file is listed under its name).
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
// - db/tables.ts declares the schema the migrations make (test/schema.test.ts compares them).

import { type Kysely, type Migration, Migrator } from 'kysely';
import type { Engine } from './engine.ts';
import { identityAndBundles } from './migrations/0001-identity-and-bundles.ts';
import { signalsAndWebhooks } from './migrations/0002-signals-and-webhooks.ts';
import { deliveryClaimIndex } from './migrations/0003-delivery-claim-index.ts';
import { deliveryPartialIndexes } from './migrations/0004-delivery-partial-indexes.ts';
import { consoleSessionsAndUsers } from './migrations/0005-console-sessions-and-users.ts';
import { deliveryLeaseHolder } from './migrations/0006-delivery-lease-holder.ts';
import { bundleRequestsAndInsights } from './migrations/0007-bundle-requests-and-insights.ts';
import { queueEarlierBundlesForInsights } from './migrations/0008-queue-earlier-bundles-for-insights.ts';
import { rotationRetentionTracing } from './migrations/0009-rotation-retention-tracing.ts';
import { webhookSubscriptionsReplaysRates } from './migrations/0010-webhook-subscriptions-replays-rates.ts';
import { detection } from './migrations/0011-detection.ts';
import { oneOpenBundleRequest } from './migrations/0012-one-open-bundle-request.ts';
import { loginFailures } from './migrations/0013-login-failures.ts';
import { fairAnalysisQueue } from './migrations/0014-fair-analysis-queue.ts';
import { emailsPerTenant } from './migrations/0015-emails-per-tenant.ts';
import { endpointTlsAuthStandardWebhooks } from './migrations/0016-endpoint-tls-auth-standard-webhooks.ts';
import { deliveryLogResponseHeaders } from './migrations/0017-delivery-log-response-headers.ts';
import { identity } from './migrations/0018-identity.ts';
import { bundleRetention } from './migrations/0019-bundle-retention.ts';
import { analyzerRules } from './migrations/0020-analyzer-rules.ts';
import { bundleBatches } from './migrations/0021-bundle-batches.ts';
import { collectionSchedules } from './migrations/0022-collection-schedules.ts';
import { dropRedundantDeliveryIndex } from './migrations/0023-drop-redundant-delivery-index.ts';
import { dropUnusedLeaseIndexPostgres } from './migrations/0024-drop-unused-lease-index-postgres.ts';

/** Every migration by the name databases record it under, in order. */
const MIGRATIONS: readonly (readonly [name: string, make: (engine: Engine) => Migration])[] = [
  ['0001_identity_and_bundles', identityAndBundles],
  ['0002_signals_and_webhooks', signalsAndWebhooks],
  ['0003_delivery_claim_index', deliveryClaimIndex],
  ['0004_delivery_partial_indexes', deliveryPartialIndexes],
  ['0005_console_sessions_and_users', consoleSessionsAndUsers],
  ['0006_delivery_lease_holder', deliveryLeaseHolder],
  ['0007_bundle_requests_and_insights', bundleRequestsAndInsights],
  ['0008_queue_earlier_bundles_for_insights', queueEarlierBundlesForInsights],
  ['0009_rotation_retention_tracing', rotationRetentionTracing],
  ['0010_webhook_subscriptions_replays_rates', webhookSubscriptionsReplaysRates],
  ['0011_detection', detection],
  ['0012_one_open_bundle_request', oneOpenBundleRequest],
  ['0013_login_failures', loginFailures],
  ['0014_fair_analysis_queue', fairAnalysisQueue],
  ['0015_emails_per_tenant', emailsPerTenant],
  ['0016_endpoint_tls_auth_standard_webhooks', endpointTlsAuthStandardWebhooks],
  ['0017_delivery_log_response_headers', deliveryLogResponseHeaders],
  ['0018_identity', identity],
  ['0019_bundle_retention', bundleRetention],
  ['0020_analyzer_rules', analyzerRules],
  ['0021_bundle_batches', bundleBatches],
  ['0022_collection_schedules', collectionSchedules],
  ['0023_drop_redundant_delivery_index', dropRedundantDeliveryIndex],
  ['0024_drop_unused_lease_index_postgres', dropUnusedLeaseIndexPostgres],
];

function migrations(engine: Engine): Record<string, Migration> {
  return Object.fromEntries(MIGRATIONS.map(([name, make]) => [name, make(engine)]));
}

/** Every migration's name, in order (the same on both engines). */
export const MIGRATION_NAMES: readonly string[] = MIGRATIONS.map(([name]) => name);

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
