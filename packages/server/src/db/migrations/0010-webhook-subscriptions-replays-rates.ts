// Issue 14, items 2–5. Endpoints choose their event types (a bit mask: subscriptions.ts)
// and, for signals, a minimum severity and signal types; an optional rate limit; their
// failing streak counts attempts and remembers which alert thresholds it announced.
// Signals carry an event type: operational events (endpoint.failing, endpoint.disabled)
// are synthetic rows like test events, their payload's data frozen in event_data.
// Deliveries re-queued by a replay name it; replays are jobs of their own. Two tables
// the hot paths write: a rate limit's state per endpoint (the claim, under the
// endpoint's claim lock) and attempt counts per endpoint and hour (the outcome writer).

import { type Kysely, type Migration, sql } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function webhookSubscriptionsReplaysRates(engine: Engine): Migration {
  const t = columnTypes(engine);
  const pg = engine === 'postgres';
  return {
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
        .addColumn('endpoint_id', t.text, (c) => c.primaryKey().references('webhook_endpoints.id').onDelete('cascade'))
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
  };
}
