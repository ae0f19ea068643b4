// Bundle batches (fleets): many bundle requests made together, one per server, all naming the
// batch. A batch is created in one transaction with its requests and its audit entry. Each
// request is an `insert … on conflict do nothing`: the one-open-request index (migration 0012)
// turns a request that lost a race with another (a single request made at the same moment) into
// a skip (`open_request`), never an error for the whole batch. Plain Kysely: both engines.

import { audit } from '../../audit/index.ts';
import { newId, type UserPrincipal } from '../../auth/index.ts';
import type { AgentTable, BundleBatchTable, BundleRequestState, BundleRequestTable, Db } from '../../db/index.ts';
import { beforeFilter, type PageRequest } from '../../kernel/pagination.ts';
import {
  type BundleRequestsRepository,
  OPEN_STATES,
  queuedRequest,
  type RequestWithHost,
} from '../bundle-requests-repository.ts';
import type { BatchFilter, Skipped } from './selection.ts';

export type Progress = Record<BundleRequestState | 'total', number>;

export interface BatchRead {
  batch: BundleBatchTable;
  requests: RequestWithHost[];
}

const STATES: BundleRequestState[] = [...OPEN_STATES, 'done', 'failed', 'expired', 'interrupted'];

export function emptyProgress(): Progress {
  return Object.fromEntries([['total', 0], ...STATES.map((s) => [s, 0])]) as Progress;
}

export class BatchesRepository {
  readonly #db: Db;
  readonly #requests: BundleRequestsRepository;

  constructor(db: Db, requests: BundleRequestsRepository) {
    this.#db = db;
    this.#requests = requests;
  }

  /** The tenant's servers among `ids`. */
  async serversByIds(tenantId: string, ids: string[]): Promise<Map<string, AgentTable>> {
    if (ids.length === 0) return new Map();
    const rows = await this.#db
      .selectFrom('agents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', ids)
      .execute();
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** The tenant's servers matching the filter (offline_since already turned into an instant), by hostname. */
  async serversMatching(
    tenantId: string,
    filter: Omit<BatchFilter, 'offline_since'>,
    offlineBefore: Date | undefined,
  ): Promise<AgentTable[]> {
    let query = this.#db
      .selectFrom('agents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('hostname')
      .orderBy('id');
    if (filter.environment !== undefined) query = query.where('environment', '=', filter.environment);
    if (filter.agent_version !== undefined) query = query.where('agent_version', '=', filter.agent_version);
    if (offlineBefore !== undefined) {
      const before = offlineBefore.toISOString();
      query = query.where((eb) => eb.or([eb('last_seen_at', 'is', null), eb('last_seen_at', '<', before)]));
    }
    return query.execute();
  }

  /** The open request of each of these servers (requests past their expiry are expired first). */
  async openRequests(agentIds: string[], at: Date): Promise<Map<string, BundleRequestTable>> {
    return this.#requests.openFor(agentIds, at);
  }

  /**
   * Creates the batch, a queued request for each chosen server and one audit entry
   * (`bundle_batch.create`, target `<id> requests=<n>`) in one transaction. A server that got an
   * open request meanwhile is added to the skipped ones. Returns undefined, and writes nothing,
   * when no request was created.
   */
  async create(input: {
    tenantId: string;
    actor: UserPrincipal;
    at: Date;
    ttlMs: number;
    filter: BatchFilter | null;
    chosen: AgentTable[];
    skipped: Skipped[];
  }): Promise<BatchRead | undefined> {
    const at = input.at.toISOString();
    const skipped = [...input.skipped];
    const batch: BundleBatchTable = {
      id: newId('bbt'),
      tenant_id: input.tenantId,
      created_by: input.actor.userId,
      created_by_role: input.actor.role === 'support' ? 'support' : 'admin',
      created_at: at,
      filter: input.filter === null ? null : JSON.stringify(input.filter),
      skipped: '[]',
    };
    const nothing = new Error('no request created');
    try {
      return await this.#db.transaction().execute(async (trx) => {
        await trx.insertInto('bundle_batches').values(batch).execute();
        const requests: RequestWithHost[] = [];
        // In one order (by id) for every batch: two batches that take the same servers in
        // other orders would otherwise wait on each other's index entries (a deadlock on PostgreSQL).
        const byId = [...input.chosen].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        for (const agent of byId) {
          const row = this.#requestRow(batch, agent, input.ttlMs);
          const inserted = await trx
            .insertInto('bundle_requests')
            .values(row)
            .onConflict((oc) => oc.doNothing())
            .returning('id')
            .executeTakeFirst();
          if (inserted) requests.push({ ...row, hostname: agent.hostname });
          else
            skipped.push({
              server_id: agent.id,
              hostname: agent.hostname,
              reason: 'open_request',
              detail: 'it got an open bundle request while this batch was made; one at a time',
            });
        }
        if (requests.length === 0) throw nothing;
        requests.sort((a, b) => (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0));
        batch.skipped = JSON.stringify(skipped);
        await trx.updateTable('bundle_batches').set({ skipped: batch.skipped }).where('id', '=', batch.id).execute();
        await audit(
          { db: trx, now: () => input.at },
          input.actor,
          'bundle_batch.create',
          `${batch.id} requests=${requests.length}`,
          input.tenantId,
        );
        return { batch, requests };
      });
    } catch (error) {
      if (error === nothing) return undefined;
      throw error;
    }
  }

  #requestRow(batch: BundleBatchTable, agent: AgentTable, ttlMs: number): BundleRequestTable {
    return queuedRequest({
      tenantId: batch.tenant_id,
      agentId: agent.id,
      requestedBy: batch.created_by,
      role: batch.created_by_role,
      at: batch.created_at,
      ttlMs,
      batchId: batch.id,
    });
  }

  /** The batch with its requests by hostname; tenantId null finds it in any tenant (support staff). */
  async find(tenantId: string | null, id: string, at: Date): Promise<BatchRead | undefined> {
    await this.#requests.expireDue(at);
    let query = this.#db.selectFrom('bundle_batches').selectAll().where('id', '=', id);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    const batch = await query.executeTakeFirst();
    if (!batch) return undefined;
    const requests = await this.#db
      .selectFrom('bundle_requests')
      .innerJoin('agents', 'agents.id', 'bundle_requests.agent_id')
      .selectAll('bundle_requests')
      .select('agents.hostname')
      .where('bundle_requests.batch_id', '=', id)
      .where('bundle_requests.tenant_id', '=', batch.tenant_id)
      .orderBy('agents.hostname')
      .orderBy('bundle_requests.id')
      .execute();
    return { batch, requests };
  }

  /** Newest first; tenantId null lists every tenant's. */
  async list(tenantId: string | null, page: PageRequest, at: Date): Promise<BundleBatchTable[]> {
    await this.#requests.expireDue(at);
    let query = this.#db
      .selectFrom('bundle_batches')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    if (page.before) query = query.where(beforeFilter('created_at', 'id', page.before));
    return query.execute();
  }

  /** Each batch's requests counted by state. */
  async progress(batchIds: string[]): Promise<Map<string, Progress>> {
    const out = new Map(batchIds.map((id) => [id, emptyProgress()]));
    if (batchIds.length === 0) return out;
    const rows = await this.#db
      .selectFrom('bundle_requests')
      .select(['batch_id', 'state', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('batch_id', 'in', batchIds)
      .groupBy(['batch_id', 'state'])
      .execute();
    for (const r of rows) {
      const p = out.get(r.batch_id as string);
      if (!p) continue;
      p[r.state] += Number(r.n);
      p.total += Number(r.n);
    }
    return out;
  }
}

/** Counts of requests by state. */
export function progressOf(requests: { state: BundleRequestState }[]): Progress {
  const p = emptyProgress();
  for (const r of requests) {
    p[r.state]++;
    p.total++;
  }
  return p;
}
