// Reads of a tenant's deliveries and their attempts, and an admin's redelivery. Writing
// deliveries (outbox), claiming and recording outcomes belong to the delivery machinery
// (signals/outbox.ts, worker.ts).

import { type SqlBool, sql } from 'kysely';
import {
  type Db,
  DELIVERY_LOG_TERM,
  type DeliveryState,
  engineOf,
  type SignalTable,
  type WebhookAttemptTable,
  type WebhookDeliveryTable,
} from '../db/index.ts';
import { beforeFilter, type PageRequest } from '../kernel/pagination.ts';
import { type DeliveryStatus, statusCondition } from './delivery-status.ts';

export type AttemptRecord = Pick<
  WebhookAttemptTable,
  'attempt' | 'started_at' | 'duration_ms' | 'status' | 'error' | 'response_excerpt'
>;

export type SentAttemptRecord = AttemptRecord &
  Pick<WebhookAttemptTable, 'signature' | 'standard_signature' | 'traceparent' | 'response_headers'>;

export class DeliveriesRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** An endpoint's deliveries, newest first, optionally only those in one state or of one status word. */
  async listForEndpoint(
    tenantId: string,
    endpointId: string,
    filter: PageRequest & { state: DeliveryState | undefined; status?: DeliveryStatus },
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
    if (filter.status) {
      const c = statusCondition(filter.status);
      query = query.where('state', 'in', c.states);
      if (c.attempted !== undefined) query = query.where('attempts', c.attempted ? '>' : '=', 0);
    }
    if (filter.before) query = query.where(beforeFilter('created_at', 'id', filter.before));
    return query.execute();
  }

  /**
   * The tenant's deliveries across its endpoints, newest first (the delivery log), narrowed by
   * any of: a signal, an endpoint, a status word, a creation time range [since, until). Every
   * filter is a condition on webhook_deliveries alone. One index leads: a signal's few
   * deliveries (signal_id), an endpoint's newest first ((endpoint_id, created_at)), or else the
   * tenant's newest first (the partial index webhook_deliveries_log, which only a query stating
   * DELIVERY_LOG_TERM may use; migration 0017 says why); the others are tested on its rows,
   * and the walk stops at the page's end.
   */
  async listForTenant(
    tenantId: string,
    filter: PageRequest & {
      signalId?: string;
      endpointId?: string;
      status?: DeliveryStatus;
      since?: string;
      until?: string;
    },
  ): Promise<WebhookDeliveryTable[]> {
    let query = this.#db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit);
    if (filter.signalId !== undefined) query = query.where('signal_id', '=', filter.signalId);
    if (filter.endpointId !== undefined) query = query.where('endpoint_id', '=', filter.endpointId);
    if (filter.signalId === undefined && filter.endpointId === undefined)
      query = query.where(sql<SqlBool>`${sql.raw(DELIVERY_LOG_TERM)}`);
    if (filter.status) {
      const c = statusCondition(filter.status);
      query = query.where('state', 'in', c.states);
      if (c.attempted !== undefined) query = query.where('attempts', c.attempted ? '>' : '=', 0);
    }
    if (filter.since !== undefined) query = query.where('created_at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('created_at', '<', filter.until);
    if (filter.before) query = query.where(beforeFilter('created_at', 'id', filter.before));
    return query.execute();
  }

  /** What a page of the delivery log shows beside each row: its endpoint's name, and its signal's kind. */
  async logLabels(
    tenantId: string,
    rows: readonly Pick<WebhookDeliveryTable, 'endpoint_id' | 'signal_id'>[],
  ): Promise<{
    endpoints: Map<string, string>;
    signals: Map<string, Pick<SignalTable, 'event_type' | 'is_test'>>;
  }> {
    const endpointIds = [...new Set(rows.map((r) => r.endpoint_id))];
    const signalIds = [...new Set(rows.map((r) => r.signal_id))];
    const [endpoints, signals] = await Promise.all([
      endpointIds.length === 0
        ? []
        : this.#db
            .selectFrom('webhook_endpoints')
            .select(['id', 'name'])
            .where('tenant_id', '=', tenantId)
            .where('id', 'in', endpointIds)
            .execute(),
      signalIds.length === 0
        ? []
        : this.#db
            .selectFrom('signals')
            .select(['id', 'event_type', 'is_test'])
            .where('tenant_id', '=', tenantId)
            .where('id', 'in', signalIds)
            .execute(),
    ]);
    return {
      endpoints: new Map(endpoints.map((e) => [e.id, e.name])),
      signals: new Map(signals.map((s) => [s.id, s])),
    };
  }

  async find(tenantId: string, id: string): Promise<WebhookDeliveryTable | undefined> {
    return this.#db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }

  /** The endpoint's newest delivery (the endpoints list shows its status and time). */
  async newestForEndpoint(tenantId: string, endpointId: string): Promise<WebhookDeliveryTable | undefined> {
    return this.#db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** A signal's deliveries, one per endpoint, with the endpoint's name; in endpoint name order. */
  async listForSignal(tenantId: string, signalId: string) {
    return this.#db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhook_endpoints', 'webhook_endpoints.id', 'webhook_deliveries.endpoint_id')
      .selectAll('webhook_deliveries')
      .select('webhook_endpoints.name as endpoint_name')
      .where('webhook_deliveries.signal_id', '=', signalId)
      .where('webhook_deliveries.tenant_id', '=', tenantId)
      .orderBy('webhook_endpoints.name')
      .orderBy('webhook_endpoints.id')
      .execute();
  }

  /** The delivery of one signal to one endpoint (a rotation's proof). */
  async forSignal(tenantId: string, signalId: string, endpointId: string): Promise<WebhookDeliveryTable | undefined> {
    return this.#db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('signal_id', '=', signalId)
      .where('endpoint_id', '=', endpointId)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }

  /** The signal a delivery carries (the attempt view rebuilds its request from it). */
  async signal(tenantId: string, id: string): Promise<SignalTable | undefined> {
    return this.#db
      .selectFrom('signals')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }

  /** Attempt `n` of a delivery (the last recorded, should a lost lease have sent it twice), with what it was sent with. */
  async attempt(tenantId: string, deliveryId: string, n: number): Promise<SentAttemptRecord | undefined> {
    return this.#db
      .selectFrom('webhook_attempts')
      .select([
        'attempt',
        'started_at',
        'duration_ms',
        'status',
        'error',
        'response_excerpt',
        'signature',
        'standard_signature',
        'traceparent',
        'response_headers',
      ])
      .where('delivery_id', '=', deliveryId)
      .where('tenant_id', '=', tenantId)
      .where('attempt', '=', n)
      .orderBy('started_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** In the order they started. */
  /**
   * The delivery with its attempts, read from one snapshot: its state and its attempt log
   * always agree (read apart, an outcome committed between the two reads showed a delivery
   * still `delivering` beside the attempt that ended it).
   */
  async findWithAttempts(
    tenantId: string,
    id: string,
  ): Promise<{ delivery: WebhookDeliveryTable; attempts: AttemptRecord[] } | undefined> {
    const read = async (db: Db) => {
      const delivery = await new DeliveriesRepository(db).find(tenantId, id);
      return delivery && { delivery, attempts: await new DeliveriesRepository(db).attempts(tenantId, id) };
    };
    // SQLite: one connection, and a transaction is a snapshot; PostgreSQL: repeatable read.
    const tx = this.#db.transaction();
    return (engineOf(this.#db) === 'postgres' ? tx.setIsolationLevel('repeatable read') : tx).execute((trx) =>
      read(trx as Db),
    );
  }

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
    // Out of any replay that re-queued it: it is an admin's own redelivery now.
    const changes = {
      state: 'pending' as const,
      next_attempt_at: at,
      completed_at: null,
      lease_until: null,
      replay_id: null,
    };
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
