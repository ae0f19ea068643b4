// A tenant's enrolled agents. Agents are created by enrolment (enrollment/) and never deleted:
// bundles and signals keep pointing at them.

import type { DetectorStatus } from '@guard/contract/detection';
import { audit } from '../audit/index.ts';
import type { UserPrincipal } from '../auth/index.ts';
import type { AgentTable, Db } from '../db/index.ts';
import { beforeFilter, type PageRequest } from '../kernel/pagination.ts';

export class AgentsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Newest enrolled first; tenantId null lists every tenant's (support staff). */
  async list(tenantId: string | null, page: PageRequest): Promise<AgentTable[]> {
    let query = this.#db
      .selectFrom('agents')
      .selectAll()
      .orderBy('enrolled_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    if (page.before) query = query.where(beforeFilter('enrolled_at', 'id', page.before));
    return query.execute();
  }

  /** tenantId null finds it in any tenant (support staff). */
  async find(tenantId: string | null, id: string): Promise<AgentTable | undefined> {
    let query = this.#db.selectFrom('agents').selectAll().where('id', '=', id);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    return query.executeTakeFirst();
  }

  /**
   * The open bundle request of each of these agents (console push, one at a time per server);
   * a request past its expiry that the agent never took is not open, whether or not the sweep
   * has marked it expired yet.
   */
  async openRequests(
    agentIds: string[],
    at: Date,
  ): Promise<Map<string, { id: string; state: string; created_at: string }>> {
    if (agentIds.length === 0) return new Map();
    const now = at.toISOString();
    const rows = await this.#db
      .selectFrom('bundle_requests')
      .select(['id', 'agent_id', 'state', 'created_at'])
      .where('agent_id', 'in', agentIds)
      .where('state', 'in', ['queued', 'delivered', 'collecting', 'uploading'])
      .where((eb) => eb.or([eb('acknowledged_at', 'is not', null), eb('expires_at', '>', now)]))
      .execute();
    return new Map(rows.map((r) => [r.agent_id, { id: r.id, state: r.state, created_at: r.created_at }]));
  }

  /**
   * When each of these agents' newest signal was received (test events and operational events
   * are no agent's); an agent without one is left out. tenantId null: any tenant (support staff).
   */
  async lastSignals(tenantId: string | null, agentIds: string[]): Promise<Map<string, string>> {
    if (agentIds.length === 0) return new Map();
    let query = this.#db
      .selectFrom('signals')
      .select(['agent_id', (eb) => eb.fn.max('received_at').as('last')])
      .where('agent_id', 'in', agentIds)
      .groupBy('agent_id');
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    const rows = await query.execute();
    return new Map(rows.flatMap((r) => (r.agent_id !== null && r.last !== null ? [[r.agent_id, r.last]] : [])));
  }

  /**
   * A heartbeat of `guard-agent daemon`: what it reports of itself (version, hostname, uptimes)
   * replaces what enrolment or the last heartbeat recorded, and it counts as seen.
   */
  async heartbeat(
    agentId: string,
    beat: {
      agentVersion: string;
      hostname: string;
      uptimeSeconds: number;
      agentUptimeSeconds: number | null;
      /** The detectors' states as reported (contract DetectorStatus); null: not reported. */
      detectors: readonly DetectorStatus[] | null;
      spoolDepth: number | null;
    },
    at: Date,
  ): Promise<void> {
    const now = at.toISOString();
    await this.#db
      .updateTable('agents')
      .set({
        agent_version: beat.agentVersion,
        hostname: beat.hostname,
        uptime_seconds: beat.uptimeSeconds,
        agent_uptime_seconds: beat.agentUptimeSeconds,
        detectors: beat.detectors === null ? null : JSON.stringify(beat.detectors),
        spool_depth: beat.spoolDepth,
        last_heartbeat_at: now,
        last_seen_at: now,
      })
      .where('id', '=', agentId)
      .execute();
  }

  /**
   * Revokes the agent's API key and records who did it, in one transaction; a repeat changes
   * and records nothing. Returns the agent (undefined if the tenant has none by that id) and
   * whether this call revoked it.
   */
  async revoke(
    tenantId: string,
    id: string,
    by: { actor: UserPrincipal; at: Date },
  ): Promise<{ row: AgentTable | undefined; changed: boolean }> {
    return this.#db.transaction().execute(async (trx) => {
      const revoked = await trx
        .updateTable('agents')
        .set({ revoked_at: by.at.toISOString() })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      const changed = Number(revoked.numUpdatedRows) > 0;
      if (changed) await audit({ db: trx, now: () => by.at }, by.actor, 'agent.revoke', id, tenantId);
      const row = await trx
        .selectFrom('agents')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return { row, changed };
    });
  }
}
