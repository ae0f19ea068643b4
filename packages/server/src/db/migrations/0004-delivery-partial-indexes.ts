// Each delivery used to sit in six indexes; every state change rewrote three of them. The
// claim and lease scans only ever look at pending or delivering rows: partial indexes hold
// just those, so a delivered row leaves them for good and ingest writes two fewer entries.

import { type Kysely, type Migration, sql } from 'kysely';
import type { Engine } from '../engine.ts';

export function deliveryPartialIndexes(engine: Engine): Migration {
  const pg = engine === 'postgres';
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('webhook_deliveries_due').execute();
      await db.schema.dropIndex('webhook_deliveries_endpoint_due').execute();
      await db.schema.dropIndex('webhook_deliveries_lease').execute();
      await db.schema
        .createIndex('webhook_deliveries_pending')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'next_attempt_at'])
        .where(sql.ref('state'), '=', 'pending')
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_leased')
        .on('webhook_deliveries')
        .column('lease_until')
        .where(sql.ref('state'), '=', 'delivering')
        .execute();
      // Replicas share the per-endpoint limit: a claim counts the endpoint's live leases.
      if (pg)
        await db.schema
          .createIndex('webhook_deliveries_leased_endpoint')
          .on('webhook_deliveries')
          .columns(['endpoint_id', 'lease_until'])
          .where(sql.ref('state'), '=', 'delivering')
          .execute();
    },
  };
}
