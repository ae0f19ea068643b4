// Bundle retention (issue 24, item 6): each tenant keeps its bundles for its retention — its
// own choice in the tenant settings, or the default (90 days), never more than the server's
// --bundle-retention-max-days — and the sweep deletes what is older, exactly as an admin's
// deletion does (deletion.ts) with `retention` as the reason. Then it removes the objects of
// deleted bundles that the store did not confirm removed before.
//
// Runs on the maintenance timer (--gc-interval) under exclusiveJob, so with several replicas
// on PostgreSQL one sweep runs at a time; a deletion marks a row only while it is not deleted,
// so even two sweeps at once would delete and audit each bundle once.

import { type DeletionDeps, deleteBundle, RETENTION_ACTOR, removePendingObjects } from './deletion.ts';
import { type BundleRetentionPolicy, effectiveBundleRetentionDays } from './settings.ts';

const DAY_MS = 86_400_000;
/** Bundles deleted per run; the next run (every --gc-interval seconds) takes the rest. */
const MAX_DELETIONS_PER_RUN = 500;

export interface BundleRetentionResult {
  /** Bundles deleted because they passed their tenant's retention. */
  expired: number;
  /** Objects of deleted bundles removed from the store on a later try. */
  objectsRemoved: number;
}

export async function sweepExpiredBundles(
  deps: DeletionDeps,
  policy: BundleRetentionPolicy,
  options: { maxDeletions?: number; onStoreError?: (error: unknown) => void } = {},
): Promise<BundleRetentionResult> {
  let budget = options.maxDeletions ?? MAX_DELETIONS_PER_RUN;
  const now = deps.now().getTime();
  const tenants = await deps.db.selectFrom('tenants').select(['id', 'bundle_retention_days']).orderBy('id').execute();
  let expired = 0;
  for (const tenant of tenants) {
    if (budget <= 0) break;
    const days = effectiveBundleRetentionDays(tenant.bundle_retention_days, policy);
    const cutoff = new Date(now - days * DAY_MS).toISOString();
    const due = await deps.db
      .selectFrom('bundles')
      .select(['id', 'tenant_id', 'object_key'])
      .where('tenant_id', '=', tenant.id)
      .where('uploaded_at', '<', cutoff)
      .where('deleted_at', 'is', null)
      .orderBy('uploaded_at')
      .limit(budget)
      .execute();
    for (const bundle of due) {
      budget -= 1;
      if (await deleteBundle(deps, bundle, { actor: RETENTION_ACTOR, reason: 'retention' }, options.onStoreError))
        expired += 1;
    }
  }
  const objectsRemoved = await removePendingObjects(
    deps,
    options.maxDeletions ?? MAX_DELETIONS_PER_RUN,
    options.onStoreError,
  );
  return { expired, objectsRemoved };
}
