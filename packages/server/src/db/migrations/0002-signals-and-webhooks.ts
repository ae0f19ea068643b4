// Signals, and the webhooks that deliver them: endpoints, deliveries and their attempts.

import { type Kysely, type Migration, sql } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function signalsAndWebhooks(engine: Engine): Migration {
  const t = columnTypes(engine);
  const pg = engine === 'postgres';
  return {
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
  };
}
