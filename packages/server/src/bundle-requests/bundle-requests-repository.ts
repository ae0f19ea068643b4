// Bundle requests (console push). Every change is a conditional UPDATE on the state it was
// decided from (request-states.ts), so two writers never both apply a change: the loser reads
// again and decides anew. One open request per server is kept by the partial unique index
// bundle_requests_one_open (migration 0012): the check before the insert gives the answer, the
// index makes it hold when requests race (PostgreSQL replicas). Plain Kysely, no engine-specific SQL.

import type { CommandReport } from '@guard/contract';
import type { Kysely } from 'kysely';
import { type AuditActor, audit } from '../audit/index.ts';
import { newId } from '../auth/index.ts';
import type { BundleRequestState, BundleRequestTable, Database, Db } from '../db/index.ts';
import { isUniqueViolation } from '../kernel/errors.ts';
import { beforeFilter, type PageRequest } from '../kernel/pagination.ts';
import { type Decision, decide, EXPIRED_REASON, type RequestChange, type RequestEvent } from './request-states.ts';

/** A request with the hostname its server reported last. */
export type RequestWithHost = BundleRequestTable & { hostname: string };

/** States in which a request is still in the agent's hands or waiting for it (migration 0012's index lists them too). */
export const OPEN_STATES: BundleRequestState[] = ['queued', 'delivered', 'collecting', 'uploading'];

export interface RequestFilter {
  agentId?: string;
  state?: BundleRequestState;
}

export type Applied =
  | { outcome: 'applied' | 'same'; row: BundleRequestTable }
  | { outcome: 'refused'; code: string; message: string; row: BundleRequestTable }
  | { outcome: 'missing' };

/** What made a request that no person asked for: the tenant's collection schedule (collection-schedule/). */
export interface RequestTrigger {
  kind: 'schedule_weekly' | 'critical_signal';
  /** The critical signal that made it. */
  signalId?: string;
}

/** Who asks: a person (admin or support staff), or the schedule with its trigger. */
export interface RequestMaker {
  actor: AuditActor;
  at: Date;
  ttlMs: number;
  trigger?: RequestTrigger;
}

/** Tries of a conditional update (or an insert) that lost a race before the caller gives up. */
const RACE_TRIES = 5;

/** A new request, queued: the row every way of asking writes (one server, a batch, the schedule). */
export function queuedRequest(o: {
  tenantId: string;
  agentId: string;
  requestedBy: string;
  role: 'admin' | 'support';
  at: string;
  ttlMs: number;
  batchId?: string;
  trigger?: { kind: string; signalId?: string };
}): BundleRequestTable {
  return {
    id: newId('brq'),
    tenant_id: o.tenantId,
    agent_id: o.agentId,
    state: 'queued',
    requested_by: o.requestedBy,
    requested_by_role: o.role,
    created_at: o.at,
    expires_at: new Date(Date.parse(o.at) + o.ttlMs).toISOString(),
    delivered_at: null,
    deliveries: 0,
    acknowledged_at: null,
    collecting_at: null,
    uploading_at: null,
    finished_at: null,
    bundle_id: null,
    error_code: null,
    error_message: null,
    error_step: null,
    reason: null,
    trigger: o.trigger?.kind ?? null,
    signal_id: o.trigger?.signalId ?? null,
    batch_id: o.batchId ?? null,
  };
}

export class BundleRequestsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Creates a queued request for the agent, audited in the same transaction; one open request
   * per server at a time: when it has one, returns it instead (`created: false`). A request
   * that another one, made at the same moment, beat to the unique index gets the same answer:
   * its transaction is rolled back and the check runs again, and finds the winner.
   */
  async create(
    agent: { id: string; tenantId: string },
    by: RequestMaker,
  ): Promise<{ created: boolean; row: BundleRequestTable }> {
    await this.expireDue(by.at);
    for (let tries = 0; tries < RACE_TRIES; tries++) {
      try {
        return await this.#createUnlessOpen(agent, by);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
    }
    throw new Error(`bundle request for ${agent.id}: the insert lost ${RACE_TRIES} races in a row`);
  }

  async #createUnlessOpen(
    agent: { id: string; tenantId: string },
    by: RequestMaker,
  ): Promise<{ created: boolean; row: BundleRequestTable }> {
    return this.#db.transaction().execute(async (trx) => {
      const open = await trx
        .selectFrom('bundle_requests')
        .selectAll()
        .where('agent_id', '=', agent.id)
        .where('state', 'in', OPEN_STATES)
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
      if (open) return { created: false, row: open };
      const row = queuedRequest({
        tenantId: agent.tenantId,
        agentId: agent.id,
        requestedBy: by.actor.userId,
        role: by.actor.role === 'support' ? 'support' : 'admin',
        at: by.at.toISOString(),
        ttlMs: by.ttlMs,
        trigger: by.trigger,
      });
      await trx.insertInto('bundle_requests').values(row).execute();
      await audit({ db: trx, now: () => by.at }, by.actor, 'bundle_request.create', row.id, agent.tenantId);
      return { created: true, row };
    });
  }

  /** tenantId null finds it in any tenant (support staff). */
  async find(tenantId: string | null, id: string, at: Date): Promise<RequestWithHost | undefined> {
    await this.expireDue(at);
    let query = this.#withHost().where('bundle_requests.id', '=', id);
    if (tenantId !== null) query = query.where('bundle_requests.tenant_id', '=', tenantId);
    return query.executeTakeFirst();
  }

  /** Newest first; tenantId null lists every tenant's. */
  async list(tenantId: string | null, page: PageRequest & RequestFilter, at: Date): Promise<RequestWithHost[]> {
    await this.expireDue(at);
    let query = this.#withHost()
      .orderBy('bundle_requests.created_at', 'desc')
      .orderBy('bundle_requests.id', 'desc')
      .limit(page.limit);
    if (tenantId !== null) query = query.where('bundle_requests.tenant_id', '=', tenantId);
    if (page.agentId !== undefined) query = query.where('bundle_requests.agent_id', '=', page.agentId);
    if (page.state !== undefined) query = query.where('bundle_requests.state', '=', page.state);
    if (page.before) query = query.where(beforeFilter('bundle_requests.created_at', 'bundle_requests.id', page.before));
    return query.execute();
  }

  /** The open request of each of these agents, if any. */
  async openFor(agentIds: string[], at: Date): Promise<Map<string, BundleRequestTable>> {
    if (agentIds.length === 0) return new Map();
    await this.expireDue(at);
    const rows = await this.#db
      .selectFrom('bundle_requests')
      .selectAll()
      .where('agent_id', 'in', agentIds)
      .where('state', 'in', OPEN_STATES)
      .execute();
    return new Map(rows.map((r) => [r.agent_id, r]));
  }

  /**
   * Expires every request not taken by its expires_at: one UPDATE over the (state, expires_at)
   * index. Called by the periodic sweep and before every read, so what a reader sees is current.
   */
  async expireDue(at: Date): Promise<number> {
    const now = at.toISOString();
    const result = await this.#db
      .updateTable('bundle_requests')
      .set({ state: 'expired', finished_at: now, reason: EXPIRED_REASON })
      .where('state', 'in', ['queued', 'delivered'])
      .where('acknowledged_at', 'is', null)
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * The agent's commands: its open requests that are not past their expiry. Each one not yet
   * acknowledged is marked handed out (queued → delivered, one more delivery) before it is returned.
   */
  async commandsFor(agentId: string, at: Date): Promise<BundleRequestTable[]> {
    await this.expireDue(at);
    const now = at.toISOString();
    return this.#db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('bundle_requests')
        .selectAll()
        .where('agent_id', '=', agentId)
        .where('state', 'in', OPEN_STATES)
        .orderBy('created_at', 'asc')
        .execute();
      const out: BundleRequestTable[] = [];
      for (const row of rows) {
        if (row.acknowledged_at !== null) {
          out.push(row);
          continue;
        }
        const handed = {
          state: 'delivered' as const,
          delivered_at: row.delivered_at ?? now,
          deliveries: row.deliveries + 1,
        };
        const updated = await trx
          .updateTable('bundle_requests')
          .set(handed)
          .where('id', '=', row.id)
          .where('state', '=', row.state)
          .where('acknowledged_at', 'is', null)
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) > 0) out.push({ ...row, ...handed });
      }
      return out;
    });
  }

  async acknowledge(agentId: string, id: string, at: Date): Promise<Applied> {
    return this.#apply(agentId, id, { kind: 'acknowledge' }, at);
  }

  async report(agentId: string, id: string, report: CommandReport, at: Date): Promise<Applied> {
    return this.#apply(agentId, id, { kind: 'report', report }, at);
  }

  /** The agent's request by id (agents see only their own). */
  async ofAgent(agentId: string, id: string): Promise<BundleRequestTable | undefined> {
    return this.#db
      .selectFrom('bundle_requests')
      .selectAll()
      .where('id', '=', id)
      .where('agent_id', '=', agentId)
      .executeTakeFirst();
  }

  /** The request_id in the manifest of the agent's bundle `bundleId`; null without one; undefined: no such bundle. */
  async requestIdOfBundle(agentId: string, bundleId: string): Promise<string | null | undefined> {
    const row = await this.#db
      .selectFrom('bundles')
      .select('manifest')
      .where('id', '=', bundleId)
      .where('agent_id', '=', agentId)
      .executeTakeFirst();
    if (!row) return undefined;
    const manifest = JSON.parse(row.manifest) as { request_id?: unknown };
    return typeof manifest.request_id === 'string' ? manifest.request_id : null;
  }

  async #apply(agentId: string, id: string, event: RequestEvent, at: Date): Promise<Applied> {
    for (let tries = 0; tries < RACE_TRIES; tries++) {
      const row = await this.ofAgent(agentId, id);
      if (!row) return { outcome: 'missing' };
      const decision: Decision = decide(
        { state: row.state, acknowledged: row.acknowledged_at !== null, expiresAt: row.expires_at },
        event,
        at,
      );
      if (decision.outcome === 'same') return { outcome: 'same', row };
      if (decision.outcome === 'refuse')
        return { outcome: 'refused', code: decision.code, message: decision.message, row };
      if (decision.outcome === 'expire_first') {
        await this.expireDue(at);
        continue; // read again: now expired, and the event is refused
      }
      const changed = await this.#write(this.#db, row, decision.change, at);
      if (changed) return { outcome: 'applied', row: changed };
    }
    throw new Error(`bundle request ${id}: the update lost ${RACE_TRIES} races in a row`);
  }

  /** Writes `change` if the row is still as read; the row after it, or undefined when another writer won. */
  async #write(
    db: Kysely<Database>,
    row: BundleRequestTable,
    change: RequestChange,
    at: Date,
  ): Promise<BundleRequestTable | undefined> {
    const now = at.toISOString();
    const set: Partial<BundleRequestTable> = { state: change.state };
    if (change.acknowledge) set.acknowledged_at = now;
    if (change.stamp) set[change.stamp] = now;
    if (change.bundleId !== undefined) set.bundle_id = change.bundleId;
    if (change.error) {
      set.error_code = change.error.code;
      set.error_message = change.error.message;
      set.error_step = change.step ?? null;
    }
    if (change.reason !== undefined) set.reason = change.reason;
    let update = db.updateTable('bundle_requests').set(set).where('id', '=', row.id).where('state', '=', row.state);
    update =
      row.acknowledged_at === null
        ? update.where('acknowledged_at', 'is', null)
        : update.where('acknowledged_at', 'is not', null);
    const result = await update.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0 ? { ...row, ...set } : undefined;
  }

  #withHost() {
    return this.#db
      .selectFrom('bundle_requests')
      .innerJoin('agents', 'agents.id', 'bundle_requests.agent_id')
      .selectAll('bundle_requests')
      .select('agents.hostname');
  }
}
