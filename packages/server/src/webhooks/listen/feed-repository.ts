// What listen streams read of the signals table (every event of a tenant is a row there:
// signals, test events and operational events alike), and the one row they write: a
// triggered test event. Ordered by (received_at, id): received_at is stamped before the row's
// transaction commits, so a row may become visible after a later-stamped one (the hub's
// late-commit window covers that; hub.ts). The index signals_tenant_received serves every read.

import type { Db, SignalTable } from '../../db/index.ts';

/** A row's place in the feed: enough to tell whether a stream has seen it. */
export interface FeedKey {
  id: string;
  tenant_id: string;
  received_at: string;
}

/** Ids per statement: well under SQLite's and PostgreSQL's parameter limits. */
const IDS_PER_READ = 500;

export class ListenFeed {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * A page of the keys of these tenants' rows received at or after `since` (ISO 8601), in feed
   * order, after `after` when given (the last key of the previous page), at most `limit`.
   */
  recentKeys(
    tenantIds: readonly string[],
    since: string,
    after: FeedKey | undefined,
    limit: number,
  ): Promise<FeedKey[]> {
    if (tenantIds.length === 0) return Promise.resolve([]);
    let q = this.#db
      .selectFrom('signals')
      .select(['id', 'tenant_id', 'received_at'])
      .where('tenant_id', 'in', [...tenantIds])
      .where('received_at', '>=', since);
    if (after)
      q = q.where((eb) =>
        eb.or([
          eb('received_at', '>', after.received_at),
          eb.and([eb('received_at', '=', after.received_at), eb('id', '>', after.id)]),
        ]),
      );
    return q.orderBy('received_at').orderBy('id').limit(limit).execute();
  }

  /** The rows of these ids, oldest first. */
  async rows(ids: readonly string[]): Promise<SignalTable[]> {
    const out: SignalTable[] = [];
    for (let i = 0; i < ids.length; i += IDS_PER_READ) {
      const chunk = ids.slice(i, i + IDS_PER_READ);
      out.push(...(await this.#db.selectFrom('signals').selectAll().where('id', 'in', chunk).execute()));
    }
    return out.sort(byFeedOrder);
  }

  /** When a row of this tenant was received; undefined when the tenant has no such row. */
  async receivedAt(tenantId: string, id: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('signals')
      .select('received_at')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row?.received_at;
  }

  /**
   * The tenant's newest `limit` rows received at or after `since`, oldest first, and whether
   * there were more (the older ones were left out).
   */
  async since(tenantId: string, since: string, limit: number): Promise<{ rows: SignalTable[]; more: boolean }> {
    const newest = await this.#db
      .selectFrom('signals')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('received_at', '>=', since)
      .orderBy('received_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    const more = newest.length > limit;
    return { rows: newest.slice(0, limit).reverse(), more };
  }

  /** Writes a triggered test event: a row of its own, with no delivery. */
  async insert(row: SignalTable): Promise<void> {
    await this.#db.insertInto('signals').values(row).execute();
  }
}

/** The feed's order: received_at, then id (both text: ISO 8601 times and ids compare as they sort). */
export function byFeedOrder(a: Pick<FeedKey, 'received_at' | 'id'>, b: Pick<FeedKey, 'received_at' | 'id'>): number {
  if (a.received_at !== b.received_at) return a.received_at < b.received_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
