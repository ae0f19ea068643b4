// Replays (issue 14, item 2): an endpoint's completed deliveries in a time range, optionally
// of one state, sent again with their own ids (the same Guard-Delivery). A replay is a job row;
// the feeder (replay-feeder.ts) re-queues its deliveries a few at a time. Engine-neutral
// Kysely: none of this is on a hot path.

import { sql } from 'kysely';
import { audit } from '../audit/index.ts';
import type { UserPrincipal } from '../auth/index.ts';
import { type Db, engineOf, type WebhookReplayTable } from '../db/index.ts';

export type ReplayStatus = 'failed' | 'succeeded';

export interface ReplayFilter {
  endpointId: string;
  /** Only deliveries in this state; undefined: failed and succeeded alike. */
  status: ReplayStatus | undefined;
  /** Deliveries created in [since, until). */
  since: string;
  until: string;
}

/** What a feeder step did. */
export type FeedResult = 'skipped' | 'waiting' | 'fed' | 'done' | 'stopped';

const statesOf = (status: ReplayStatus | undefined | null): ReplayStatus[] =>
  status ? [status] : ['failed', 'succeeded'];

export class ReplaysRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** How many deliveries the filter matches now (a dry run, and a replay's total). */
  async count(tenantId: string, f: ReplayFilter): Promise<number> {
    const row = await this.#db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('endpoint_id', '=', f.endpointId)
      .where('tenant_id', '=', tenantId)
      .where('state', 'in', statesOf(f.status))
      .where('created_at', '>=', f.since)
      .where('created_at', '<', f.until)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Inserts a running replay; throws a unique violation when the endpoint already runs one. */
  /** Starts a replay, audited in the same transaction (a running replay is never unaudited). */
  async insert(row: WebhookReplayTable, by: UserPrincipal): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx.insertInto('webhook_replays').values(row).execute();
      await audit(
        { db: trx, now: () => new Date(row.created_at) },
        by,
        'webhook_endpoint.replay',
        row.id,
        row.tenant_id,
      );
    });
  }

  async find(tenantId: string, id: string): Promise<WebhookReplayTable | undefined> {
    return this.#db
      .selectFrom('webhook_replays')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }

  /** Newest first. */
  async listForEndpoint(tenantId: string, endpointId: string, limit: number): Promise<WebhookReplayTable[]> {
    return this.#db
      .selectFrom('webhook_replays')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** Its deliveries re-queued and not yet attempted (pending or in flight). */
  async inFlight(id: string): Promise<number> {
    const row = await this.#db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('replay_id', '=', id)
      .where('state', 'in', ['pending', 'delivering'])
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Stops a running replay; false when it was not running. */
  /** Cancels a running replay, audited in the same transaction; false when it was not running. */
  async cancel(tenantId: string, id: string, at: string, by: UserPrincipal): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('webhook_replays')
        .set({ state: 'cancelled', finished_at: at })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('state', '=', 'running')
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      await audit({ db: trx, now: () => new Date(at) }, by, 'webhook_endpoint.replay_cancel', id, tenantId);
      return true;
    });
  }

  /** Ids of the running replays (of every tenant). */
  async running(): Promise<string[]> {
    const rows = await this.#db.selectFrom('webhook_replays').select('id').where('state', '=', 'running').execute();
    return rows.map((r) => r.id);
  }

  /**
   * One feeder step of one replay, in one transaction: re-queues the next deliveries of its
   * walk (oldest first, after its cursor), at most `budget(fedAt)` of them, while fewer than
   * `window` of its deliveries are queued or in flight (so the rest of the endpoint's slots stay
   * free for live deliveries) and fewer than `window` deliveries of any kind are due and waiting
   * at the endpoint (a replay waits whenever live traffic backs up). On PostgreSQL the replay's row is locked, skipped
   * when another replica is feeding it.
   */
  async feed(
    id: string,
    now: Date,
    window: number,
    budget: (fedAt: string | null) => number,
  ): Promise<{ result: FeedResult; queued: number }> {
    const nowIso = now.toISOString();
    return this.#db.transaction().execute(async (trx) => {
      const query = trx.selectFrom('webhook_replays').selectAll().where('id', '=', id).where('state', '=', 'running');
      const replay = await (engineOf(trx) === 'postgres' ? query.forUpdate().skipLocked() : query).executeTakeFirst();
      if (!replay) return { result: 'skipped', queued: 0 };
      const endpoint = await trx
        .selectFrom('webhook_endpoints')
        .select('enabled')
        .where('id', '=', replay.endpoint_id)
        .executeTakeFirst();
      if (endpoint?.enabled !== 1) {
        await trx
          .updateTable('webhook_replays')
          .set({ state: 'cancelled', finished_at: nowIso, error: 'the endpoint was disabled' })
          .where('id', '=', id)
          .execute();
        return { result: 'stopped', queued: 0 };
      }
      // Its own deliveries not yet attempted (queued or in flight), and everything due at the endpoint.
      const outstanding = await trx
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('replay_id', '=', id)
        .where('state', 'in', ['pending', 'delivering'])
        .executeTakeFirstOrThrow();
      const waiting = await trx
        .selectFrom((eb) =>
          eb
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('endpoint_id', '=', replay.endpoint_id)
            .where('state', '=', 'pending')
            .where('next_attempt_at', '<=', nowIso)
            .limit(window)
            .as('due'),
        )
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const n = Math.min(budget(replay.fed_at), window - Number(outstanding.n), window - Number(waiting.n));
      if (n <= 0) return { result: 'waiting', queued: 0 };
      let walk = trx
        .selectFrom('webhook_deliveries')
        .select(['id', 'created_at'])
        .where('endpoint_id', '=', replay.endpoint_id)
        .where('state', 'in', statesOf(replay.status as ReplayStatus | null))
        .where('created_at', '>=', replay.since)
        .where('created_at', '<', replay.until)
        .orderBy('created_at')
        .orderBy('id')
        .limit(n);
      // The range condition keeps the walk on the (endpoint_id, created_at) index from the cursor on.
      if (replay.cursor_at !== null && replay.cursor_id !== null)
        walk = walk
          .where('created_at', '>=', replay.cursor_at)
          .where(sql<boolean>`(created_at, id) > (${replay.cursor_at}, ${replay.cursor_id})`);
      const rows = await walk.execute();
      if (rows.length === 0) {
        await trx
          .updateTable('webhook_replays')
          .set({ state: 'done', finished_at: nowIso })
          .where('id', '=', id)
          .execute();
        return { result: 'done', queued: 0 };
      }
      // Due now, with the id they always had; an attempt that fails is not retried again (the
      // retry schedule already ran out for most), as a manual redelivery.
      const requeued = await trx
        .updateTable('webhook_deliveries')
        .set({ state: 'pending', next_attempt_at: nowIso, completed_at: null, lease_until: null, replay_id: id })
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .where('state', 'in', ['failed', 'succeeded'])
        .executeTakeFirst();
      const last = rows[rows.length - 1];
      await trx
        .updateTable('webhook_replays')
        .set({
          queued: replay.queued + Number(requeued.numUpdatedRows),
          cursor_at: last.created_at,
          cursor_id: last.id,
          fed_at: nowIso,
        })
        .where('id', '=', id)
        .execute();
      return { result: 'fed', queued: Number(requeued.numUpdatedRows) };
    });
  }
}
