// Issue 25, item 3: webhook_deliveries_signal (signal_id), made by 0005, is the leading column of
// webhook_deliveries_signal_endpoint (signal_id, endpoint_id) from 0002, which serves every
// lookup by signal as well. Every delivery written paid for both: dropping the one ~10 µs of the
// ~50 µs a delivery's insert costs on SQLite (bench/sqlite-cycle: statement times). Safe for a
// server of the previous version still running (rolling upgrade): it reads by the other index.

import { type Kysely, type Migration, sql } from 'kysely';

export function dropRedundantDeliveryIndex(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await sql`drop index if exists webhook_deliveries_signal`.execute(db);
    },
  };
}
