// Bundles are taken for analysis tenant by tenant (issue 19): the next is the oldest
// queued bundle of the tenant whose last analysis started longest ago, so one tenant's
// flood of uploads waits behind everyone else's one bundle.

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function fairAnalysisQueue(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('bundle_insights').addColumn('claimed_at', t.text).execute();
      await db.schema
        .createIndex('bundle_insights_tenant_claimed')
        .on('bundle_insights')
        .columns(['tenant_id', 'claimed_at'])
        .execute();
    },
  };
}
