// The analysis queue and its results: one bundle_insights row per bundle, written in the
// transaction that registers the bundle (enqueueAnalysis), so work queued survives a restart.
// A worker claims a row with a lease (a conditional UPDATE: two workers never both win); a
// lease that runs out (the process died) lets the row be claimed again, up to MAX_ATTEMPTS.
// Plain Kysely, no engine-specific SQL.

import type { Finding } from '@guard/contract';
import type { Kysely } from 'kysely';
import type { InsightSummary } from '../analysis/index.ts';
import type { BundleInsightTable, Database, Db } from '../db/index.ts';

/** A bundle whose analysis was started this often without finishing is given up on. */
export const MAX_ATTEMPTS = 3;

export interface ClaimedBundle {
  bundleId: string;
  tenantId: string;
  agentId: string;
  objectKey: string;
  manifest: string;
  uploadedAt: string;
  attempts: number;
  /** When this claim was made: the outcome is recorded only while the claim is still this one. */
  claimedAt: string;
}

/** Queues a newly registered bundle for analysis; `db` is the registering transaction. */
export async function enqueueAnalysis(
  db: Kysely<Database>,
  bundle: { id: string; tenant_id: string; agent_id: string },
  at: string,
): Promise<void> {
  await db
    .insertInto('bundle_insights')
    .values({
      bundle_id: bundle.id,
      tenant_id: bundle.tenant_id,
      agent_id: bundle.agent_id,
      state: 'pending',
      attempts: 0,
      lease_until: null,
      created_at: at,
      finished_at: null,
      findings: null,
      summary: null,
    })
    .execute();
}

export class InsightsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * The next bundle to analyse (pending, or running with a lapsed lease), leased until
   * `leaseUntil`: tenants in turn (the one whose last analysis started longest ago first), each
   * tenant's bundles oldest first.
   */
  async claim(at: Date, leaseUntil: Date): Promise<ClaimedBundle | undefined> {
    const now = at.toISOString();
    for (let tries = 0; tries < 5; tries++) {
      const candidate = await this.#db
        .selectFrom('bundle_insights')
        .innerJoin('bundles', 'bundles.id', 'bundle_insights.bundle_id')
        .select([
          'bundle_insights.bundle_id',
          'bundle_insights.state',
          'bundle_insights.attempts',
          'bundles.tenant_id',
          'bundles.agent_id',
          'bundles.object_key',
          'bundles.manifest',
          'bundles.uploaded_at',
        ])
        .where((eb) =>
          eb.or([
            eb('bundle_insights.state', '=', 'pending'),
            eb.and([eb('bundle_insights.state', '=', 'running'), eb('bundle_insights.lease_until', '<', now)]),
          ]),
        )
        .orderBy(
          (eb) =>
            eb.fn.coalesce(
              eb
                .selectFrom('bundle_insights as served')
                .select((s) => s.fn.max('served.claimed_at').as('at'))
                .whereRef('served.tenant_id', '=', 'bundle_insights.tenant_id'),
              eb.val(''),
            ),
          'asc',
        )
        .orderBy('bundle_insights.created_at')
        .limit(1)
        .executeTakeFirst();
      if (!candidate) return undefined;
      const updated = await this.#db
        .updateTable('bundle_insights')
        .set({
          state: 'running',
          lease_until: leaseUntil.toISOString(),
          claimed_at: now,
          attempts: candidate.attempts + 1,
        })
        .where('bundle_id', '=', candidate.bundle_id)
        .where('state', '=', candidate.state)
        .where('attempts', '=', candidate.attempts)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) > 0)
        return {
          bundleId: candidate.bundle_id,
          tenantId: candidate.tenant_id,
          agentId: candidate.agent_id,
          objectKey: candidate.object_key,
          manifest: candidate.manifest,
          uploadedAt: candidate.uploaded_at,
          attempts: candidate.attempts + 1,
          claimedAt: now,
        };
    }
    return undefined;
  }

  /**
   * Records a claimed bundle's outcome — unless it was queued again meanwhile (requeue: a
   * re-analysis asked for while this one ran), whose own analysis then records it.
   */
  async finish(
    job: { bundleId: string; claimedAt: string },
    result: { state: 'done' | 'failed'; findings: Finding[]; summary: InsightSummary | null },
    at: Date,
  ): Promise<void> {
    const bundleId = job.bundleId;
    await this.#db
      .updateTable('bundle_insights')
      .set({
        state: result.state,
        findings: JSON.stringify(result.findings),
        summary: result.summary === null ? null : JSON.stringify(result.summary),
        finished_at: at.toISOString(),
        lease_until: null,
      })
      .where('bundle_id', '=', bundleId)
      .where('state', '=', 'running')
      .where('claimed_at', '=', job.claimedAt)
      .execute();
  }

  /**
   * Queues a bundle's analysis again (POST …/analyze): the next claim analyses it afresh, with
   * the rules of that time; an analysis under way records nothing (finish). False: no such bundle.
   */
  async requeue(bundleId: string): Promise<boolean> {
    const updated = await this.#db
      .updateTable('bundle_insights')
      .set({ state: 'pending', attempts: 0, lease_until: null, finished_at: null })
      .where('bundle_id', '=', bundleId)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  }

  /** Hands a claimed bundle back (the worker is stopping): the next start takes it again. */
  async release(bundleId: string, attemptsBefore: number): Promise<void> {
    await this.#db
      .updateTable('bundle_insights')
      .set({ state: 'pending', lease_until: null, attempts: attemptsBefore })
      .where('bundle_id', '=', bundleId)
      .where('state', '=', 'running')
      .execute();
  }

  /** The embedded database has one owner: at its start every lease of a crashed run is void. */
  async releaseLeases(): Promise<number> {
    const r = await this.#db
      .updateTable('bundle_insights')
      .set({ state: 'pending', lease_until: null })
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** A bundle's insights; tenantId null finds it in any tenant (support staff). */
  /** A bundle as its archive is read (the evidence lines, a rule test), in the tenant's scope (null: any tenant's). */
  async archiveOf(
    tenantId: string | null,
    bundleId: string,
  ): Promise<
    | {
        id: string;
        tenant_id: string;
        object_key: string;
        manifest: string;
        uploaded_at: string;
        deleted_at?: string | null;
      }
    | undefined
  > {
    let query = this.#db
      .selectFrom('bundles')
      .select(['id', 'tenant_id', 'object_key', 'manifest', 'uploaded_at', 'deleted_at'])
      .where('id', '=', bundleId);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    return await query.executeTakeFirst();
  }

  async find(
    tenantId: string | null,
    bundleId: string,
  ): Promise<
    | { bundle: { id: string; tenant_id: string; deleted_at: string | null }; insights: BundleInsightTable | undefined }
    | undefined
  > {
    let query = this.#db
      .selectFrom('bundles')
      .leftJoin('bundle_insights', 'bundle_insights.bundle_id', 'bundles.id')
      .select([
        'bundles.id',
        'bundles.tenant_id',
        'bundles.deleted_at',
        'bundle_insights.state',
        'bundle_insights.attempts',
        'bundle_insights.findings',
        'bundle_insights.finished_at',
        'bundle_insights.created_at',
      ])
      .where('bundles.id', '=', bundleId);
    if (tenantId !== null) query = query.where('bundles.tenant_id', '=', tenantId);
    const row = await query.executeTakeFirst();
    if (!row) return undefined;
    const insights =
      row.state === null
        ? undefined
        : ({
            bundle_id: row.id,
            tenant_id: row.tenant_id,
            state: row.state,
            attempts: row.attempts ?? 0,
            findings: row.findings,
            finished_at: row.finished_at,
            created_at: row.created_at ?? '',
          } as BundleInsightTable);
    return { bundle: { id: row.id, tenant_id: row.tenant_id, deleted_at: row.deleted_at ?? null }, insights };
  }

  /** When the request a console_push bundle answers was made (its agent's own requests only). */
  async requestCreatedAt(agentId: string, requestId: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('bundle_requests')
      .select('created_at')
      .where('id', '=', requestId)
      .where('agent_id', '=', agentId)
      .executeTakeFirst();
    return row?.created_at;
  }

  /** The agent versions of the tenant's servers that are not revoked. */
  async tenantVersions(tenantId: string): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('agents')
      .select('agent_version')
      .where('tenant_id', '=', tenantId)
      .where('revoked_at', 'is', null)
      .execute();
    return rows.map((r) => r.agent_version);
  }

  /** The same server's newest earlier bundle that was analysed, with its summary. */
  async previous(
    agentId: string,
    before: { uploadedAt: string; bundleId: string },
  ): Promise<{ bundleId: string; uploadedAt: string; summary: InsightSummary } | undefined> {
    const row = await this.#db
      .selectFrom('bundles')
      .innerJoin('bundle_insights', 'bundle_insights.bundle_id', 'bundles.id')
      .select(['bundles.id', 'bundles.uploaded_at', 'bundle_insights.summary'])
      .where('bundles.agent_id', '=', agentId)
      .where('bundles.id', '!=', before.bundleId)
      .where('bundles.uploaded_at', '<=', before.uploadedAt)
      .where('bundle_insights.state', '=', 'done')
      .where('bundle_insights.summary', 'is not', null)
      .orderBy('bundles.uploaded_at', 'desc')
      .orderBy('bundles.id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row?.summary) return undefined;
    return { bundleId: row.id, uploadedAt: row.uploaded_at, summary: JSON.parse(row.summary) as InsightSummary };
  }
}
