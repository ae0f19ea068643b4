// The claim reads each endpoint's due deliveries in time order: one index seek per endpoint.

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';

export function deliveryClaimIndex(_engine: Engine): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('webhook_deliveries_endpoint_due')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'state', 'next_attempt_at'])
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_lease')
        .on('webhook_deliveries')
        .columns(['state', 'lease_until'])
        .execute();
    },
  };
}
