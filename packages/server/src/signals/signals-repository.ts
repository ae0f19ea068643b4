// Reads of a tenant's signals (people's views). Signals are written through the outbox
// (outbox.ts), with their deliveries, in one transaction.

import type { Db, SignalTable } from '../db/index.ts';
import { beforeFilter, type PageRequest } from '../pagination.ts';

export class SignalsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Real signals, newest received first; test events of endpoints are left out. */
  async list(tenantId: string, page: PageRequest): Promise<SignalTable[]> {
    let query = this.#db
      .selectFrom('signals')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('is_test', '=', 0)
      .orderBy('received_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit);
    if (page.before) query = query.where(beforeFilter('received_at', 'id', page.before));
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
