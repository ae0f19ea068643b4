// The outbox: a signal and one delivery per enabled endpoint of its tenant are written in one
// transaction, so a crash at any point loses no delivery. Signals created in the same turn of
// the event loop share that transaction (group commit: one WAL commit instead of one per
// request, the largest cost of ingest), each inside its own savepoint so a row that fails
// fails only its own request.

import type { SignalTable } from '../db/index.ts';
import { type Db, type Statements, writeTransaction } from '../db/index.ts';
import { timeOrderedUuid } from '../ids.ts';

const BATCH_MAX = 256;

interface Pending {
  signal: SignalTable;
  onlyEndpointId: string | undefined;
  resolve: (deliveryIds: string[]) => void;
  reject: (error: unknown) => void;
}

export class SignalOutbox {
  private readonly db: Db;
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(db: Db) {
    this.db = db;
  }

  /**
   * Writes the signal and its deliveries (to one endpoint only with `onlyEndpointId`, for a
   * test event); resolves with the delivery ids once committed.
   */
  write(signal: SignalTable, onlyEndpointId?: string): Promise<string[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ signal, onlyEndpointId, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue.splice(0, BATCH_MAX);
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    const results: ({ ok: true; ids: string[] } | { ok: false; error: unknown })[] = [];
    writeTransaction(this.db, (sql) => {
      for (const p of batch) {
        sql.db.exec('SAVEPOINT signal');
        try {
          results.push({ ok: true, ids: insertOne(sql, p.signal, p.onlyEndpointId) });
          sql.db.exec('RELEASE signal');
        } catch (error) {
          sql.db.exec('ROLLBACK TO signal');
          sql.db.exec('RELEASE signal');
          results.push({ ok: false, error });
        }
      }
    }).then(
      () => {
        for (const [i, p] of batch.entries()) {
          const r = results[i];
          if (r.ok) p.resolve(r.ids);
          else p.reject(r.error);
        }
      },
      (error: unknown) => {
        for (const p of batch) p.reject(error);
      },
    );
  }
}

function insertOne(sql: Statements, s: SignalTable, onlyEndpointId: string | undefined): string[] {
  sql.run(
    `insert into signals (id, tenant_id, agent_id, server_id, server_name, signal_type, severity, description,
       identity_id, identity_name, environment, created_at, received_at, is_test)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    s.id,
    s.tenant_id,
    s.agent_id,
    s.server_id,
    s.server_name,
    s.signal_type,
    s.severity,
    s.description,
    s.identity_id,
    s.identity_name,
    s.environment,
    s.created_at,
    s.received_at,
    s.is_test,
  );
  const endpoints =
    onlyEndpointId === undefined
      ? sql.all<{ id: string }>(
          'select id from webhook_endpoints where tenant_id = ? and enabled = 1 order by id',
          s.tenant_id,
        )
      : sql.all<{ id: string }>(
          'select id from webhook_endpoints where tenant_id = ? and enabled = 1 and id = ?',
          s.tenant_id,
          onlyEndpointId,
        );
  const ids: string[] = [];
  for (const e of endpoints) {
    const id = timeOrderedUuid();
    sql.run(
      `insert into webhook_deliveries (id, tenant_id, signal_id, endpoint_id, state, attempts, next_attempt_at, created_at)
       values (?, ?, ?, ?, 'pending', 0, ?, ?)`,
      id,
      s.tenant_id,
      s.id,
      e.id,
      s.received_at,
      s.received_at,
    );
    ids.push(id);
  }
  return ids;
}
