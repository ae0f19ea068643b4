// Tenants' detection policies, stored in detection_policies (one row per tenant that changed
// anything) and read through a short cache: ingest reads the policy for every detection signal
// and the agent channel for every heartbeat and poll, so each process reads a tenant's row at
// most once per CACHE_MS. A change made in this process is seen at once (the cache entry is
// dropped); one made on another replica within CACHE_MS.

import { audit } from '../audit/index.ts';
import type { UserPrincipal } from '../auth/index.ts';
import { type Db, engineOf } from '../db/index.ts';
import { applyChange, type DetectionPolicy, type PolicyChange, policyOf, storedSettings } from './policy.ts';

/** How long a process trusts the policy it read (another replica's change shows within this). */
export const CACHE_MS = 1000;

export class DetectionPolicies {
  readonly #db: Db;
  readonly #cache = new Map<string, { at: number; policy: Promise<DetectionPolicy> }>();

  constructor(db: Db) {
    this.#db = db;
  }

  /** The tenant's policy (the defaults when it never changed one). */
  get(tenantId: string): Promise<DetectionPolicy> {
    const now = performance.now();
    const hit = this.#cache.get(tenantId);
    if (hit && now - hit.at < CACHE_MS) return hit.policy;
    const policy = this.#read(tenantId);
    this.#cache.set(tenantId, { at: now, policy });
    // A failed read is not kept.
    policy.catch(() => {
      if (this.#cache.get(tenantId)?.policy === policy) this.#cache.delete(tenantId);
    });
    if (this.#cache.size > 10_000) this.#cache.delete(this.#cache.keys().next().value as string);
    return policy;
  }

  async #read(tenantId: string): Promise<DetectionPolicy> {
    const row = await this.#db
      .selectFrom('detection_policies')
      .select(['signal_types', 'revision', 'updated_at'])
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return policyOf(row);
  }

  /**
   * Applies a change (only the types and fields given) in one transaction with its audit entry
   * (`detection.update`, what changed); a change that changes nothing writes nothing. Two
   * changes at once (two admins, two replicas) are applied one after the other: the tenant's
   * row is locked before it is read.
   */
  async update(
    tenantId: string,
    change: PolicyChange,
    by: { actor: UserPrincipal; at: Date },
  ): Promise<{ policy: DetectionPolicy; changed: string[] }> {
    const result = await this.#db.transaction().execute(async (trx) => {
      let read = trx
        .selectFrom('detection_policies')
        .select(['signal_types', 'revision', 'updated_at'])
        .where('tenant_id', '=', tenantId);
      if (engineOf(this.#db) === 'postgres') {
        // The row to lock exists from the first change on; make it (as the defaults) if not.
        await trx
          .insertInto('detection_policies')
          .values({ tenant_id: tenantId, signal_types: '{}', revision: 0, updated_at: by.at.toISOString() })
          .onConflict((oc) => oc.column('tenant_id').doNothing())
          .execute();
        read = read.forUpdate();
      }
      const current = policyOf(await read.executeTakeFirst());
      const { next, changed } = applyChange(current, change);
      if (changed.length === 0) return { policy: current, changed };
      const updatedAt = by.at.toISOString();
      const revision = current.revision + 1;
      const values = { signal_types: storedSettings(next), revision, updated_at: updatedAt };
      await trx
        .insertInto('detection_policies')
        .values({ tenant_id: tenantId, ...values })
        .onConflict((oc) => oc.column('tenant_id').doUpdateSet(values))
        .execute();
      await audit({ db: trx, now: () => by.at }, by.actor, 'detection.update', changed.join(', '), tenantId);
      return { policy: { ...next, revision, updatedAt }, changed };
    });
    this.#cache.delete(tenantId);
    return result;
  }
}
