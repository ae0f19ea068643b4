// Collects what an upload left behind but nobody registered: a presigned slot whose URL
// expired without a complete PUT, and a stored object still unregistered an hour after its
// URL expired (the agent registers right after its PUT). Registered objects are never touched.
// With an S3 store the PUT goes to the bucket, so a slot never says "stored": every slot gets
// the hour (its object may have arrived just before the URL expired), then its key is deleted
// from the bucket whether or not an object arrived.

import type { Db } from '../db/index.ts';
import type { ObjectStore } from './store.ts';
import { UploadsRepository } from './uploads-repository.ts';

export const UNREGISTERED_GRACE_MS = 60 * 60 * 1000;
/** Slots looked at per run; the next run (every --gc-interval seconds) takes the rest. */
const COLLECT_BATCH = 1000;

export async function collectExpiredUploads(deps: { db: Db; store: ObjectStore; now: () => Date }): Promise<number> {
  const now = deps.now().getTime();
  const uploads = new UploadsRepository(deps.db);
  const rows = await uploads.listExpired(new Date(now).toISOString(), COLLECT_BATCH);
  let collected = 0;
  for (const row of rows) {
    const mayHoldObject = row.state === 'stored' || deps.store.kind === 's3';
    if (mayHoldObject && Date.parse(row.expires_at) + UNREGISTERED_GRACE_MS > now) continue;
    await deps.store.delete(row.object_key);
    if (await uploads.remove(row.object_key, row.state)) collected += 1;
  }
  return collected;
}
