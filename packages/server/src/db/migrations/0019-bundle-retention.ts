// Issue 24, item 6: bundle retention and deletion (expand only: every column is new and
// nullable). A deleted bundle keeps its row as the record that it existed and was deleted —
// who, when and why — while its object and its findings go:
// - bundles.deleted_at, deleted_by (the admin's user id, or `retention`), deleted_reason
//   (`admin` or `retention`), object_removed_at (the store confirmed the object's deletion;
//   null on a deleted bundle: the sweep tries again);
// - tenants.bundle_retention_days: days the tenant keeps its bundles; null: the default (90,
//   within the server's --bundle-retention-max-days).
// The sweep finds a tenant's live bundles past its retention by (tenant_id, deleted_at,
// uploaded_at) — the deleted ones, which stay, are never scanned again — and the deleted ones
// whose object is still to remove by (deleted_at, object_removed_at).

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function bundleRetention(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      for (const column of ['deleted_at', 'deleted_by', 'deleted_reason', 'object_removed_at'])
        await db.schema.alterTable('bundles').addColumn(column, t.text).execute();
      await db.schema.alterTable('tenants').addColumn('bundle_retention_days', 'integer').execute();
      await db.schema
        .createIndex('bundles_tenant_live_uploaded')
        .on('bundles')
        .columns(['tenant_id', 'deleted_at', 'uploaded_at'])
        .execute();
      await db.schema
        .createIndex('bundles_object_removal')
        .on('bundles')
        .columns(['deleted_at', 'object_removed_at'])
        .execute();
    },
  };
}
