// Reads of the audit log, newest first; tenantId null reads every tenant's (support staff).

import type { AuditTable, Db } from '../db/index.ts';
import { beforeFilter, type PageRequest } from '../kernel/pagination.ts';

/** An entry with its actor's email (null once that user is removed). */
export type AuditEntry = AuditTable & { actor_email: string | null };

export class AuditRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async list(tenantId: string | null, filter: PageRequest & { action: string | undefined }): Promise<AuditEntry[]> {
    let query = this.#db
      .selectFrom('audit_log')
      .leftJoin('users', 'users.id', 'audit_log.actor_id')
      .selectAll('audit_log')
      .select('users.email as actor_email')
      .orderBy('audit_log.at', 'desc')
      .orderBy('audit_log.id', 'desc')
      .limit(filter.limit);
    if (tenantId !== null) query = query.where('audit_log.tenant_id', '=', tenantId);
    if (filter.action !== undefined) query = query.where('audit_log.action', '=', filter.action);
    if (filter.before) query = query.where(beforeFilter('audit_log.at', 'audit_log.id', filter.before));
    return query.execute();
  }
}
