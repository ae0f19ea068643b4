// Reads of a tenant's signals (people's views). Signals are written through the outbox
// (outbox.ts), with their deliveries, in one transaction.

import type { Db, SignalTable } from '../db/index.ts';
import { beforeFilter, type PageRequest } from '../pagination.ts';

/** Filters of the console's signal list; times are toISOString() forms (stored timestamps compare as text). */
export interface SignalFilter {
  severityMin?: number;
  signalType?: string;
  serverId?: string;
  since?: string;
  until?: string;
}

export class SignalsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Real signals, newest received first, filtered; test events of endpoints are left out. */
  async list(tenantId: string, page: PageRequest & SignalFilter): Promise<SignalTable[]> {
    let query = this.#db
      .selectFrom('signals')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('is_test', '=', 0)
      .orderBy('received_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit);
    if (page.before) query = query.where(beforeFilter('received_at', 'id', page.before));
    if (page.severityMin !== undefined) query = query.where('severity', '>=', page.severityMin);
    if (page.signalType !== undefined) query = query.where('signal_type', '=', page.signalType);
    if (page.serverId !== undefined) query = query.where('server_id', '=', page.serverId);
    if (page.since !== undefined) query = query.where('received_at', '>=', page.since);
    if (page.until !== undefined) query = query.where('received_at', '<', page.until);
    return query.execute();
  }

  async find(tenantId: string, id: string): Promise<SignalTable | undefined> {
    return this.#db
      .selectFrom('signals')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }
}
