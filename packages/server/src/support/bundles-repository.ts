// Registered bundles. Agents register into their own tenant; people read their tenant's,
// support staff every tenant's (tenantId null: the caller checked that role).

import { sql } from 'kysely';
import { type BundleTable, type Db, engineOf } from '../db/index.ts';
import { enqueueAnalysis } from '../insights/index.ts';
import { isUniqueViolation } from '../kernel/errors.ts';
import { beforeFilter, type PageRequest } from '../kernel/pagination.ts';

/** A bundle with the hostname its agent reported at enrolment, and the email of the admin who deleted it. */
export type BundleWithHost = BundleTable & { hostname: string; deleted_by_email: string | null };

/** What the bundle diff reads of one bundle: its manifest and its analysis. */
export interface ComparableBundle {
  id: string;
  tenant_id: string;
  agent_id: string;
  uploaded_at: string;
  manifest: string;
  /** null: no analysis row (it is queued at register, so only for a bundle being registered). */
  insight_state: string | null;
  findings: string | null;
  summary: string | null;
}

/** Filters of the console's bundle list; times in toISOString() form. */
export interface BundleFilter {
  agentId?: string;
  trigger?: string;
  since?: string;
  until?: string;
}

export class BundlesRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async findByObjectKey(tenantId: string, objectKey: string): Promise<BundleTable | undefined> {
    return this.#db
      .selectFrom('bundles')
      .selectAll()
      .where('object_key', '=', objectKey)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }

  /**
   * Records the bundle, marks its upload slot registered and queues its analysis (insights/),
   * in one transaction. Registering
   * an object twice keeps the first record: a concurrent register that won is returned with
   * `created: false`.
   */
  async register(
    tenantId: string,
    bundle: Omit<BundleTable, 'tenant_id'>,
  ): Promise<{ bundle: BundleTable; created: boolean }> {
    const row: BundleTable = { ...bundle, tenant_id: tenantId };
    try {
      await this.#db.transaction().execute(async (trx) => {
        await trx.insertInto('bundles').values(row).execute();
        await trx
          .updateTable('uploads')
          .set({ state: 'registered' })
          .where('object_key', '=', row.object_key)
          .where('tenant_id', '=', tenantId)
          .execute();
        await enqueueAnalysis(trx, row, row.uploaded_at);
      });
      return { bundle: row, created: true };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const first = await this.#db
        .selectFrom('bundles')
        .selectAll()
        .where('object_key', '=', row.object_key)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow();
      return { bundle: first, created: false };
    }
  }

  /** Newest uploaded first, filtered; tenantId null lists every tenant's. */
  async list(tenantId: string | null, page: PageRequest & BundleFilter): Promise<BundleWithHost[]> {
    let query = this.#withHost().orderBy('bundles.uploaded_at', 'desc').orderBy('bundles.id', 'desc').limit(page.limit);
    if (tenantId !== null) query = query.where('bundles.tenant_id', '=', tenantId);
    if (page.agentId !== undefined) query = query.where('bundles.agent_id', '=', page.agentId);
    // The trigger lives in the stored manifest (a bundle's own record of itself), JSON text
    // on both engines, read by each engine's own JSON operator.
    if (page.trigger !== undefined) {
      const trigger =
        engineOf(this.#db) === 'postgres'
          ? sql<string>`(bundles.manifest::json ->> 'trigger')`
          : sql<string>`json_extract(bundles.manifest, '$.trigger')`;
      query = query.where(trigger, '=', page.trigger);
    }
    if (page.since !== undefined) query = query.where('bundles.uploaded_at', '>=', page.since);
    if (page.until !== undefined) query = query.where('bundles.uploaded_at', '<', page.until);
    if (page.before) query = query.where(beforeFilter('bundles.uploaded_at', 'bundles.id', page.before));
    return query.execute();
  }

  /** tenantId null finds it in any tenant. */
  async find(tenantId: string | null, id: string): Promise<BundleWithHost | undefined> {
    let query = this.#withHost().where('bundles.id', '=', id);
    if (tenantId !== null) query = query.where('bundles.tenant_id', '=', tenantId);
    return query.executeTakeFirst();
  }

  /** A bundle not deleted, with its analysis; tenantId null finds it in any tenant (support staff). */
  async comparable(tenantId: string | null, id: string): Promise<ComparableBundle | undefined> {
    let query = this.#comparable().where('bundles.id', '=', id).where('bundles.deleted_at', 'is', null);
    if (tenantId !== null) query = query.where('bundles.tenant_id', '=', tenantId);
    return query.executeTakeFirst();
  }

  /** The same server's bundle, not deleted, uploaded just before this one (uploaded_at, then id, as the list orders). */
  async previousOf(bundle: ComparableBundle): Promise<ComparableBundle | undefined> {
    return this.#comparable()
      .where('bundles.deleted_at', 'is', null)
      .where('bundles.tenant_id', '=', bundle.tenant_id)
      .where('bundles.agent_id', '=', bundle.agent_id)
      .where(beforeFilter('bundles.uploaded_at', 'bundles.id', { at: bundle.uploaded_at, id: bundle.id }))
      .orderBy('bundles.uploaded_at', 'desc')
      .orderBy('bundles.id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  #comparable() {
    return this.#db
      .selectFrom('bundles')
      .leftJoin('bundle_insights', 'bundle_insights.bundle_id', 'bundles.id')
      .select([
        'bundles.id',
        'bundles.tenant_id',
        'bundles.agent_id',
        'bundles.uploaded_at',
        'bundles.manifest',
        'bundle_insights.state as insight_state',
        'bundle_insights.findings',
        'bundle_insights.summary',
      ]);
  }

  #withHost() {
    return this.#db
      .selectFrom('bundles')
      .innerJoin('agents', 'agents.id', 'bundles.agent_id')
      .leftJoin('users', 'users.id', 'bundles.deleted_by')
      .selectAll('bundles')
      .select(['agents.hostname', 'users.email as deleted_by_email']);
  }
}
