// Issue 18, items 2 and 3. A signal may carry the agent's idempotency key: unique per
// agent, so a retried POST (or two replicas taking the same one at once) makes one signal;
// the key lives as long as its signal row. The newest signal of a server is read by
// (agent_id, received_at). The daemon's heartbeat reports its detectors (JSON) and spool.
// A tenant's detection policy: per signal type enabled and a severity override (JSON),
// with a revision that every change bumps (the version agents compare).

import { type Kysely, type Migration, sql } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function detection(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
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
  };
}
