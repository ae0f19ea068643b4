// A tenant's webhook endpoints, as stored: the secret and the custom headers are sealed
// (secret-box.ts, endpoint-headers.ts) by the caller before they reach this module.

import { type Db, engineOf, type WebhookEndpointTable } from '../db/index.ts';

export type EndpointChanges = Partial<Omit<WebhookEndpointTable, 'id' | 'tenant_id' | 'secret_sealed' | 'created_at'>>;

export class EndpointsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async insert(tenantId: string, endpoint: Omit<WebhookEndpointTable, 'tenant_id'>): Promise<WebhookEndpointTable> {
    const row: WebhookEndpointTable = { ...endpoint, tenant_id: tenantId };
    await this.#db.insertInto('webhook_endpoints').values(row).execute();
    return row;
  }

  /** Oldest first. */
  async list(tenantId: string): Promise<WebhookEndpointTable[]> {
    return this.#db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at')
      .execute();
  }

  async find(tenantId: string, id: string): Promise<WebhookEndpointTable | undefined> {
    return this.#db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }

  /**
   * Applies `changes`; with `failPending`, in the same transaction, the endpoint's deliveries
   * waiting for their next attempt are failed with that error (an endpoint being disabled).
   * An attempt in flight is not touched: it finishes and is recorded, without a retry.
   */
  async update(
    tenantId: string,
    id: string,
    changes: EndpointChanges,
    failPending?: { at: string; error: string },
  ): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .updateTable('webhook_endpoints')
        .set(changes)
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .execute();
      if (failPending)
        await trx
          .updateTable('webhook_deliveries')
          .set({ state: 'failed', last_error: failPending.error, completed_at: failPending.at, lease_until: null })
          .where('endpoint_id', '=', id)
          .where('tenant_id', '=', tenantId)
          .where('state', '=', 'pending')
          .execute();
    });
  }

  /**
   * Deletes the endpoint with its deliveries and their attempts; false when the tenant has no
   * such endpoint. On PostgreSQL the endpoint's row is locked first, the order in which the
   * delivery queue locks an endpoint and then its deliveries (no deadlock with a replica
   * recording outcomes meanwhile).
   */
  async delete(tenantId: string, id: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const query = trx
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId);
      const endpoint = await (engineOf(trx) === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
      if (!endpoint) return false;
      const deliveryIds = trx.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id);
      await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveryIds).execute();
      await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
      await trx.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
      return true;
    });
  }
}
