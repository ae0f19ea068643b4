// Bundles registered before insights existed are queued for analysis too (literals, not
// parameters: PostgreSQL types an INSERT … SELECT's parameters as text).

import { type Kysely, type Migration, sql } from 'kysely';
import type { Engine } from '../engine.ts';

export function queueEarlierBundlesForInsights(_engine: Engine): Migration {
  return {
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
  };
}
