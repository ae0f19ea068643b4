// Issue 25, item 3: on PostgreSQL, webhook_deliveries_leased (lease_until) where delivering,
// from 0004, serves no query: every PostgreSQL query of leased rows goes by endpoint (the claim,
// the count of other replicas' live leases), and webhook_deliveries_leased_endpoint
// (endpoint_id, lease_until) where delivering serves those and the rest (a count of all leased
// rows for /metrics, the wholesale release of leases in tests). Every lease wrote an entry in
// both. SQLite keeps it: its claim finds run-out leases across endpoints by it. Safe for a
// server of the previous version still running (rolling upgrade): it reads by the other index.

import { type Kysely, type Migration, sql } from 'kysely';
import type { Engine } from '../engine.ts';

export function dropUnusedLeaseIndexPostgres(engine: Engine): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (engine === 'postgres') await sql`drop index if exists webhook_deliveries_leased`.execute(db);
    },
  };
}
