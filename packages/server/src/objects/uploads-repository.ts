// Upload slots: presigned (a URL was issued), stored (the object arrived whole), registered
// (a bundle record points at it). Slots are scoped by the tenant they were presigned for;
// the expiry sweep alone reads across tenants.

import { sql } from 'kysely';
import { type Db, engineOf, type UploadState, type UploadTable } from '../db/index.ts';

export class UploadsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Records a presigned slot if the tenant's quota holds it (quotaBytes 0: no quota); else
   * returns the bytes the tenant holds and writes nothing. The check and the insert are one
   * transaction, and concurrent presigns of a tenant are counted one after the other: on the
   * embedded database the transaction holds the only connection; on PostgreSQL, whose
   * replicas and pooled connections presign at once, it first locks the tenant's row.
   */
  async reserve(
    tenantId: string,
    slot: Omit<UploadTable, 'tenant_id' | 'state'>,
    quota: { quotaBytes: number; now: Date },
  ): Promise<{ reserved: true } | { reserved: false; heldBytes: number }> {
    return this.#db.transaction().execute(async (trx) => {
      if (quota.quotaBytes > 0) {
        if (engineOf(trx) === 'postgres')
          await trx.selectFrom('tenants').select('id').where('id', '=', tenantId).forNoKeyUpdate().execute();
        const held = await bytesHeld(trx, tenantId, quota.now);
        if (held + slot.size > quota.quotaBytes) return { reserved: false, heldBytes: held };
      }
      await trx
        .insertInto('uploads')
        .values({ ...slot, tenant_id: tenantId, state: 'presigned' })
        .execute();
      return { reserved: true };
    });
  }

  async find(tenantId: string, objectKey: string): Promise<UploadTable | undefined> {
    return this.#db
      .selectFrom('uploads')
      .selectAll()
      .where('object_key', '=', objectKey)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }

  /**
   * Marks the slot stored once its object arrived whole. False when the slot is gone: it
   * expired and was collected while the body streamed, so the object belongs to nothing.
   */
  async markStored(tenantId: string, objectKey: string): Promise<boolean> {
    const slot = await this.#db
      .updateTable('uploads')
      .set({ state: 'stored' })
      .where('object_key', '=', objectKey)
      .where('tenant_id', '=', tenantId)
      .where('state', 'in', ['presigned', 'stored'])
      .executeTakeFirst();
    if (Number(slot.numUpdatedRows) > 0) return true;
    return (await this.find(tenantId, objectKey)) !== undefined;
  }

  /** Maintenance, across tenants: slots not registered whose URL expired before `before`. */
  async listExpired(
    before: string,
    limit: number,
  ): Promise<Pick<UploadTable, 'object_key' | 'state' | 'expires_at'>[]> {
    return this.#db
      .selectFrom('uploads')
      .select(['object_key', 'state', 'expires_at'])
      .where('state', 'in', ['presigned', 'stored'])
      .where('expires_at', '<', before)
      .limit(limit)
      .execute();
  }

  /** Maintenance: removes a slot if it is still in `state` (a register in between wins). */
  async remove(objectKey: string, state: UploadState): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('uploads')
      .where('object_key', '=', objectKey)
      .where('state', '=', state)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

/**
 * Bytes a tenant holds against its quota: registered bundles not deleted, objects stored but not yet
 * registered (until collected), and presigned slots whose URL is still valid (reservations:
 * parallel presigns cannot overshoot the quota together).
 */
async function bytesHeld(db: Db, tenantId: string, now: Date): Promise<number> {
  const { rows } = await sql<{ held: number | null }>`
    select
      coalesce((select sum(size) from bundles where tenant_id = ${tenantId} and deleted_at is null), 0)
      + coalesce((select sum(size) from uploads where tenant_id = ${tenantId}
          and (state = 'stored' or (state = 'presigned' and expires_at > ${now.toISOString()}))), 0) as held`.execute(
    db,
  );
  return Number(rows[0]?.held ?? 0);
}
