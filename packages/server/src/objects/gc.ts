// Collects what an upload left behind but nobody registered: a presigned slot whose URL
// expired without a complete PUT, and a stored object still unregistered an hour after its
// URL expired (the agent registers right after its PUT). Registered objects are never touched.

import type { AppDeps } from '../deps.ts';

export const UNREGISTERED_GRACE_MS = 60 * 60 * 1000;

export async function collectExpiredUploads(deps: Pick<AppDeps, 'db' | 'store' | 'now'>): Promise<number> {
  const now = deps.now().getTime();
  const rows = await deps.db
    .selectFrom('uploads')
    .select(['object_key', 'state', 'expires_at'])
    .where('state', 'in', ['presigned', 'stored'])
    .where('expires_at', '<', new Date(now).toISOString())
    .limit(1000)
    .execute();
  let collected = 0;
  for (const row of rows) {
    if (row.state === 'stored' && Date.parse(row.expires_at) + UNREGISTERED_GRACE_MS > now) continue;
    await deps.store.delete(row.object_key);
    const r = await deps.db
      .deleteFrom('uploads')
      .where('object_key', '=', row.object_key)
      .where('state', '=', row.state)
      .executeTakeFirst();
    collected += Number(r.numDeletedRows);
  }
  return collected;
}
