// Issue 24, item 5: scheduled collection (expand only: a new table and new nullable columns).
// - collection_schedules: a tenant's collection_schedule setting, one row per tenant that set
//   one. The weekly part (weekly_weekday null: none) with weekly_last_slot, the slot
//   (RFC 3339) the weekly run last fired for: the scheduler claims a slot by a conditional
//   UPDATE on it, so a slot fires once whatever the replicas; and the critical-signal part
//   (critical_min_interval_hours null: none).
// - bundle_requests.trigger (`schedule_weekly`, `critical_signal`; null: asked by a person)
//   and signal_id (the critical signal that made it). The critical trigger's interval is
//   checked by (agent_id, trigger, created_at).

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function collectionSchedules(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('collection_schedules')
        .addColumn('tenant_id', t.text, (c) => c.primaryKey().references('tenants.id'))
        .addColumn('weekly_enabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('weekly_weekday', t.text)
        .addColumn('weekly_hour', 'integer')
        .addColumn('weekly_last_slot', t.text)
        .addColumn('critical_enabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('critical_min_interval_hours', 'integer')
        .addColumn('updated_at', t.text, (c) => c.notNull())
        .addColumn('updated_by', t.text, (c) => c.notNull())
        .execute();
      await db.schema.alterTable('bundle_requests').addColumn('trigger', t.text).execute();
      await db.schema.alterTable('bundle_requests').addColumn('signal_id', t.text).execute();
      await db.schema
        .createIndex('bundle_requests_agent_trigger')
        .on('bundle_requests')
        .columns(['agent_id', 'trigger', 'created_at'])
        .execute();
    },
  };
}
