// Issue 21, item 7: the console's delivery log lists a tenant's deliveries across its
// endpoints, newest first, a page at a time; (tenant_id, created_at, id) lets both engines walk
// them in that order and stop at the page's end (an endpoint's list has had its own index
// since 0002). Each attempt also keeps the receiver's response headers, capped and with
// credential-like values masked (webhooks/response-headers.ts): JSON, null when there was no
// response or the attempt was recorded before.

import { type Kysely, type Migration, type SqlBool, sql } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

/** The condition of the log's partial index; a migration's text never changes, so it is written here. */
export const DELIVERY_LOG_TERM = "tenant_id <> ''";

export function deliveryLogResponseHeaders(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      // Partial on a condition always true that only the log's query states (DELIVERY_LOG_TERM
      // in webhooks/deliveries-repository.ts, word for word): SQLite has no statistics, and an
      // index led by tenant_id would otherwise tie with (endpoint_id, created_at) for every query
      // that names both, and win (an endpoint's deliveries, replays, retention), turning their
      // seek into a walk through the whole tenant. The condition names a column that never
      // changes: one on `attempts` (written by every outcome) made each outcome rewrite the
      // index entry on SQLite and ruled out HOT updates on PostgreSQL (bench:webhooks, engine
      // alone: 55 µs more server CPU per delivery).
      await db.schema
        .createIndex('webhook_deliveries_log')
        .on('webhook_deliveries')
        .columns(['tenant_id', 'created_at', 'id'])
        .where(sql.raw<SqlBool>(DELIVERY_LOG_TERM))
        .execute();
      await db.schema.alterTable('webhook_attempts').addColumn('response_headers', t.text).execute();
    },
  };
}
