// Issue 19, finding 3. One open bundle request per server, kept by a partial unique index
// on the open states (those of bundle-requests-repository.ts' OPEN_STATES, frozen here):
// the check-then-insert alone let concurrent requests on PostgreSQL open up to four.
// A database that already holds several open requests of a server keeps the newest
// (created_at, then id) and closes the others first, as `interrupted` with a reason saying
// why (an agent still working on one of them gets 409 request_finished at its next report).
// Replicas of the previous release still check before they insert; one that loses the
// race to the index answers 500 instead of opening a second request.

import { type Kysely, type Migration, sql } from 'kysely';
import type { Engine } from '../engine.ts';

export function oneOpenBundleRequest(_engine: Engine): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const now = new Date().toISOString();
      await sql`
        update bundle_requests set state = 'interrupted', finished_at = ${now},
          reason = 'closed by the upgrade to one open request per server: a newer request of this server is open'
        where state in ('queued', 'delivered', 'collecting', 'uploading')
          and exists (select 1 from bundle_requests newer
                      where newer.agent_id = bundle_requests.agent_id
                        and newer.state in ('queued', 'delivered', 'collecting', 'uploading')
                        and (newer.created_at > bundle_requests.created_at
                             or (newer.created_at = bundle_requests.created_at and newer.id > bundle_requests.id)))
      `.execute(db);
      await db.schema
        .createIndex('bundle_requests_one_open')
        .on('bundle_requests')
        .column('agent_id')
        .unique()
        .where(sql.ref('state'), 'in', ['queued', 'delivered', 'collecting', 'uploading'])
        .execute();
    },
  };
}
