// Reads of a tenant's signals (people's views). Signals are written through the outbox
// (outbox.ts), with their deliveries, in one transaction.

import { audit } from '../audit/index.ts';
import type { UserPrincipal } from '../auth/index.ts';
import type { Db, SignalTable } from '../db/index.ts';
import { beforeFilter, type PageRequest } from '../kernel/pagination.ts';

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

  /** The signal this agent sent with this idempotency key, with its delivery count; undefined: none. */
  async findByIdempotencyKey(
    tenantId: string,
    agentId: string,
    key: string,
  ): Promise<{ signalId: string; deliveries: number } | undefined> {
    const row = await this.#db
      .selectFrom('signals as s')
      .select((eb) => [
        's.id',
        eb
          .selectFrom('webhook_deliveries as d')
          .select((d) => d.fn.countAll<number | string>().as('n'))
          .whereRef('d.signal_id', '=', 's.id')
          .where('d.tenant_id', '=', tenantId)
          .as('deliveries'),
      ])
      .where('s.tenant_id', '=', tenantId)
      .where('s.agent_id', '=', agentId)
      .where('s.idempotency_key', '=', key)
      .executeTakeFirst();
    return row && { signalId: row.id, deliveries: Number(row.deliveries ?? 0) };
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

  /**
   * Erases the signal's payload on request: its description and identity are blanked and its
   * deliveries' stored data removed (the attempts' response excerpts and signatures, which
   * a receiver or a guess could tie back to the payload); deliveries still waiting for an
   * attempt are failed, so nothing is sent without it. The row stays, with erased_at, as the
   * tombstone the audit log points at. Audited in the same transaction; erasing twice changes
   * nothing more. Undefined when the tenant has no such signal.
   */
  async erasePayload(
    tenantId: string,
    id: string,
    by: { actor: UserPrincipal; at: Date },
  ): Promise<SignalTable | undefined> {
    const at = by.at.toISOString();
    return this.#db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('signals')
        .set({ description: '', identity_id: '', identity_name: '', erased_at: at })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('erased_at', 'is', null)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) > 0) {
        const deliveries = trx.selectFrom('webhook_deliveries').select('id').where('signal_id', '=', id);
        await trx
          .updateTable('webhook_attempts')
          .set({ response_excerpt: null, signature: null })
          .where('delivery_id', 'in', deliveries)
          .where('tenant_id', '=', tenantId)
          .execute();
        await trx
          .updateTable('webhook_deliveries')
          .set({ state: 'failed', last_error: "the signal's payload was erased", completed_at: at, lease_until: null })
          .where('signal_id', '=', id)
          .where('tenant_id', '=', tenantId)
          .where('state', '=', 'pending')
          .execute();
        await audit({ db: trx, now: () => by.at }, by.actor, 'signal.erase', id, tenantId);
      }
      return trx
        .selectFrom('signals')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
    });
  }
}
