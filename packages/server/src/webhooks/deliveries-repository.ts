// Reads of a tenant's deliveries and their attempts, and an admin's redelivery. Writing
// deliveries (outbox), claiming and recording outcomes belong to the delivery machinery
// (signals/outbox.ts, worker.ts).

import type { Db, DeliveryState, WebhookAttemptTable, WebhookDeliveryTable } from '../db/index.ts';
import { beforeFilter, type PageRequest } from '../pagination.ts';

export type AttemptRecord = Pick<
  WebhookAttemptTable,
  'attempt' | 'started_at' | 'duration_ms' | 'status' | 'error' | 'response_excerpt'
>;

export class DeliveriesRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** An endpoint's deliveries, newest first, optionally only those in one state. */
  async listForEndpoint(
    tenantId: string,
    endpointId: string,
    filter: PageRequest & { state: DeliveryState | undefined },
  ): Promise<WebhookDeliveryTable[]> {
    let query = this.#db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit);
    if (filter.state) query = query.where('state', '=', filter.state);
    if (filter.before) query = query.where(beforeFilter('created_at', 'id', filter.before));
    return query.execute();
  }

  async find(tenantId: string, id: string): Promise<WebhookDeliveryTable | undefined> {
    return this.#db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }

  /** In the order they started. */
  async attempts(tenantId: string, deliveryId: string): Promise<AttemptRecord[]> {
    return this.#db
      .selectFrom('webhook_attempts')
      .select(['attempt', 'started_at', 'duration_ms', 'status', 'error', 'response_excerpt'])
      .where('delivery_id', '=', deliveryId)
      .where('tenant_id', '=', tenantId)
      .orderBy('started_at')
      .execute();
  }

  /**
   * Makes the delivery due at `at` again (same id, so the same Guard-Delivery), unless an
   * attempt is in flight. Returns the fields it set.
   */
  async redeliver(tenantId: string, id: string, at: string) {
    const changes = { state: 'pending' as const, next_attempt_at: at, completed_at: null, lease_until: null };
    await this.#db
      .updateTable('webhook_deliveries')
      .set(changes)
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .where('state', '!=', 'delivering')
      .execute();
    return changes;
  }
}
