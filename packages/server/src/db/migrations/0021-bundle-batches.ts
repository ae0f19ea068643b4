// Issue 24, item 4: fleets: bundle requests made together for many servers (expand only).
// - bundle_batches: one row per batch, the tenant's; who made it, when, the filter that chose
//   its servers (JSON, null when it named them) and the servers it skipped with the reason
//   (JSON array, kept so the batch's page still says why later).
// - bundle_requests.batch_id: the batch a request belongs to; null for a request made alone
//   (every request made before this migration). Indexed: a batch's page reads its requests.
// Batches are listed newest first per tenant by (tenant_id, created_at).

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function bundleBatches(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('bundle_batches')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('tenant_id', t.text, (c) => c.notNull().references('tenants.id'))
        .addColumn('created_by', t.text, (c) => c.notNull())
        .addColumn('created_by_role', t.text, (c) => c.notNull())
        .addColumn('created_at', t.text, (c) => c.notNull())
        .addColumn('filter', t.text)
        .addColumn('skipped', t.text, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('bundle_batches_tenant_created')
        .on('bundle_batches')
        .columns(['tenant_id', 'created_at'])
        .execute();
      await db.schema
        .alterTable('bundle_requests')
        .addColumn('batch_id', t.text, (c) => c.references('bundle_batches.id'))
        .execute();
      await db.schema.createIndex('bundle_requests_batch').on('bundle_requests').column('batch_id').execute();
    },
  };
}
