// Deleting a bundle (issue 24, item 6), by the tenant's admin or by retention. The row stays as
// the record that the bundle existed and was deleted — who, when, why — so support staff see
// that it was deleted; its content goes: the object in the store, and its analysis (findings
// quote the bundle's lines). In one transaction the row is marked, the findings removed and
// the deletion audited; then the object is removed from the store. A store that fails then
// leaves object_removed_at null, and every sweep tries again (removePendingObjects) until the
// store confirms it: a deleted bundle is never served in between (reads answer 410 from the
// row, not the store).

import { type AuditActor, audit } from '../audit/index.ts';
import type { Db } from '../db/index.ts';
import { ApiError } from '../kernel/errors.ts';
import type { ObjectStore } from '../objects/index.ts';

export type DeletionReason = 'admin' | 'retention';

/** The audit log's actor for retention: guard-server itself. */
export const RETENTION_ACTOR: AuditActor = { userId: 'guard', role: 'system' };

/** What every read of a deleted bundle's content answers. */
export function bundleDeleted(): ApiError {
  return new ApiError(410, 'bundle_deleted', 'the bundle was deleted: its file and findings are gone');
}

export interface DeletionDeps {
  db: Db;
  store: ObjectStore;
  now: () => Date;
}

/**
 * Marks the tenant's bundle deleted, removes its findings and audits it (`bundle.delete` by an
 * admin, `bundle.expire` by retention), then removes its object. False when it was already
 * deleted (or is not the tenant's): nothing changed. A store failure is not thrown: the
 * deletion stands and the sweep removes the object later.
 */
export async function deleteBundle(
  deps: DeletionDeps,
  bundle: { id: string; tenant_id: string; object_key: string },
  by: { actor: AuditActor; reason: DeletionReason },
  onStoreError: (error: unknown) => void = () => {},
): Promise<boolean> {
  const at = deps.now().toISOString();
  const marked = await deps.db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('bundles')
      .set({
        deleted_at: at,
        deleted_by: by.reason === 'retention' ? 'retention' : by.actor.userId,
        deleted_reason: by.reason,
      })
      .where('id', '=', bundle.id)
      .where('tenant_id', '=', bundle.tenant_id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    await trx.deleteFrom('bundle_insights').where('bundle_id', '=', bundle.id).execute();
    const action = by.reason === 'retention' ? 'bundle.expire' : 'bundle.delete';
    await audit({ db: trx, now: deps.now }, by.actor, action, bundle.id, bundle.tenant_id);
    return true;
  });
  if (!marked) return false;
  try {
    await removeObject(deps, bundle);
  } catch (error) {
    onStoreError(error);
  }
  return true;
}

async function removeObject(deps: DeletionDeps, bundle: { id: string; object_key: string }): Promise<void> {
  await deps.store.delete(bundle.object_key);
  await deps.db
    .updateTable('bundles')
    .set({ object_removed_at: deps.now().toISOString() })
    .where('id', '=', bundle.id)
    .execute();
}

/**
 * Objects of deleted bundles that the store has not confirmed removed: tried again, `limit` at a
 * time, oldest deletion first. One the store refuses again is reported and skipped, so it never
 * holds up the others. Answers how many the store removed.
 */
export async function removePendingObjects(
  deps: DeletionDeps,
  limit: number,
  onStoreError: (error: unknown) => void = () => {},
): Promise<number> {
  const rows = await deps.db
    .selectFrom('bundles')
    .select(['id', 'object_key'])
    .where('deleted_at', 'is not', null)
    .where('object_removed_at', 'is', null)
    .orderBy('deleted_at')
    .limit(limit)
    .execute();
  let removed = 0;
  for (const row of rows) {
    try {
      await removeObject(deps, row);
      removed += 1;
    } catch (error) {
      onStoreError(error);
    }
  }
  return removed;
}
