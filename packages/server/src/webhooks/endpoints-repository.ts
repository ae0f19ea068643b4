// A tenant's webhook endpoints, as stored: the secret and the custom headers are sealed
// (secret-box.ts, endpoint-headers.ts) by the caller before they reach this module.

import { sql } from 'kysely';
import { audit } from '../audit/index.ts';
import type { UserPrincipal } from '../auth/index.ts';
import { type Db, engineOf, type WebhookEndpointTable } from '../db/index.ts';

export type EndpointChanges = Partial<
  Omit<
    WebhookEndpointTable,
    | 'id'
    | 'tenant_id'
    | 'secret_sealed'
    | 'created_at'
    | 'previous_secret_sealed'
    | 'previous_secret_expires_at'
    | 'rotation_started_at'
    | 'rotation_proof_signal_id'
  >
>;

/** Who did it and when: rotations are audited in the transaction that makes them. */
export interface Actor {
  user: UserPrincipal;
  at: Date;
}

/** The old secret and the rotation's proof, forgotten (a rotation that ended). */
const ROTATION_ENDED = {
  previous_secret_sealed: null,
  previous_secret_expires_at: null,
  rotation_proof_signal_id: null,
} as const;

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
      // A changed rate limit starts with a full bucket: the old one was counted at the old rate
      // (a very slow one could hold the endpoint back for days after the limit was raised).
      if (changes.rate_limit !== undefined)
        await trx
          .deleteFrom('webhook_endpoint_rates')
          .where('endpoint_id', 'in', (eb) =>
            eb.selectFrom('webhook_endpoints').select('id').where('id', '=', id).where('tenant_id', '=', tenantId),
          )
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

  /**
   * Makes `secretSealed` the endpoint's secret. With `graceEndsAt` the secret it replaces is
   * kept (sealed as it was) until then; without, it is dropped at once. Refused (false) while
   * an earlier rotation's grace period runs, and for an endpoint the tenant does not have:
   * the caller tells which.
   */
  async rotate(
    tenantId: string,
    id: string,
    secretSealed: string,
    graceEndsAt: string | undefined,
    by: Actor,
  ): Promise<boolean> {
    const at = by.at.toISOString();
    return this.#db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('webhook_endpoints')
        .set({
          secret_sealed: secretSealed,
          // The right-hand side reads the row as it was: the outgoing secret, still sealed.
          previous_secret_sealed: graceEndsAt === undefined ? null : sql<string>`secret_sealed`,
          previous_secret_expires_at: graceEndsAt ?? null,
          rotation_started_at: at,
          rotation_proof_signal_id: null,
          updated_at: at,
        })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where((eb) => eb.or([eb('previous_secret_sealed', 'is', null), eb('previous_secret_expires_at', '<=', at)]))
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      const grace = graceEndsAt === undefined ? 0 : Math.round((Date.parse(graceEndsAt) - by.at.getTime()) / 1000);
      await audit(
        { db: trx, now: () => by.at },
        by.user,
        'webhook_endpoint.secret_rotate',
        `${id} grace_seconds=${grace}`,
        tenantId,
      );
      return true;
    });
  }

  /**
   * Records `signalId` as the proof test event of the rotation in its grace period (before the
   * signal is written, so that the worker, which reads the endpoint with each claim, signs it
   * with the new secret alone); false when no rotation is in its grace period.
   */
  async setRotationProof(tenantId: string, id: string, signalId: string, by: Actor): Promise<boolean> {
    const at = by.at.toISOString();
    return this.#db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('webhook_endpoints')
        .set({ rotation_proof_signal_id: signalId, updated_at: at })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('previous_secret_sealed', 'is not', null)
        .where('previous_secret_expires_at', '>', at)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      await audit(
        { db: trx, now: () => by.at },
        by.user,
        'webhook_endpoint.secret_proof',
        `${id} signal=${signalId}`,
        tenantId,
      );
      return true;
    });
  }

  /**
   * Ends the grace period now: the old secret is erased. Only while the rotation whose proof
   * is `proofSignalId` is still the one in its grace period (false otherwise).
   */
  async completeRotation(tenantId: string, id: string, proofSignalId: string, by: Actor): Promise<boolean> {
    const at = by.at.toISOString();
    return this.#db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('webhook_endpoints')
        .set({ ...ROTATION_ENDED, updated_at: at })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('rotation_proof_signal_id', '=', proofSignalId)
        .where('previous_secret_expires_at', '>', at)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      await audit({ db: trx, now: () => by.at }, by.user, 'webhook_endpoint.secret_rotation_complete', id, tenantId);
      return true;
    });
  }
}

/**
 * Erases the old secret of every rotation whose grace period has ended (maintenance). The
 * worker stops signing with it at the end of the grace period by itself; this removes it from
 * the database. Returns how many endpoints it erased one from.
 */
export async function eraseExpiredSecrets(db: Db, now: Date): Promise<number> {
  const at = now.toISOString();
  const r = await db
    .updateTable('webhook_endpoints')
    .set({ ...ROTATION_ENDED, updated_at: at })
    .where('previous_secret_expires_at', '<=', at)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
