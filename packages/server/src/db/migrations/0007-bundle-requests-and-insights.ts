// Console-pushed bundles and their insights (issue 12): the tenant's consent to
// support-initiated collection, the daemon's heartbeat, bundle requests with a timestamp
// per state, and the analysis queue of stored bundles (a row per bundle, claimed with a lease).

import { type Kysely, type Migration, sql } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function bundleRequestsAndInsights(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
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
  };
}
