// The outbox: a signal and one delivery per enabled endpoint of its tenant are written in one
// transaction (the delivery queue's enqueue), so a crash at any point loses no delivery.
// Signals created in the same turn of the event loop share that transaction (group commit:
// one commit instead of one per request, the largest cost of ingest); the queue isolates
// each, so a row that fails fails only its own request. At most `maxInFlight` transactions
// run at once: signals that arrive meanwhile wait and go together in the next one, so the
// slower a commit (PostgreSQL's round trips and WAL flush), the more each one carries.
// A signal that finds nothing in flight goes at once. An agent's idempotency key that a signal
// holds already (even one written by the same batch, or committed by another replica while this
// batch waited on the key) writes nothing: that signal answers (the queue's `existing`).

import type { SignalTable } from '../db/index.ts';
import type { DeliveryQueue, EnqueueResult } from '../webhooks/index.ts';

const BATCH_MAX = 256;

type Written = Extract<EnqueueResult, { ok: true }>;

interface Pending {
  signal: SignalTable;
  onlyEndpointId: string | undefined;
  resolve: (written: Written) => void;
  reject: (error: unknown) => void;
}

/** What a signal POST answers: the signal, its deliveries, and whether this request created it. */
export interface SignalWritten {
  signalId: string;
  deliveries: number;
  /** false: the agent's idempotency key named a signal already, which answers instead; nothing was written. */
  created: boolean;
}

export class SignalOutbox {
  private readonly queue: Pick<DeliveryQueue, 'enqueue'>;
  private readonly maxInFlight: number;
  private pending: Pending[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(queue: Pick<DeliveryQueue, 'enqueue'>, options: { maxInFlight?: number } = {}) {
    this.queue = queue;
    this.maxInFlight = options.maxInFlight ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Writes the signal and its deliveries (to one endpoint only with `onlyEndpointId`, for a
   * test event); resolves with the delivery ids once committed.
   */
  async write(signal: SignalTable, onlyEndpointId?: string): Promise<string[]> {
    return (await this.enqueue(signal, onlyEndpointId)).deliveryIds;
  }

  /**
   * Writes an agent's signal, unless its idempotency key (signal.idempotency_key, per agent)
   * names a signal already: then nothing is written and that signal answers.
   */
  async writeOnce(signal: SignalTable): Promise<SignalWritten> {
    const written = await this.enqueue(signal, undefined);
    return written.existing
      ? { signalId: written.existing.signalId, deliveries: written.existing.deliveries, created: false }
      : { signalId: signal.id, deliveries: written.deliveryIds.length, created: true };
  }

  private enqueue(signal: SignalTable, onlyEndpointId: string | undefined): Promise<Written> {
    return new Promise((resolve, reject) => {
      this.pending.push({ signal, onlyEndpointId, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.pending.length === 0 || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending.splice(0, BATCH_MAX);
    this.inFlight++;
    this.schedule();
    this.queue
      .enqueue(batch)
      .finally(() => {
        this.inFlight--;
        this.schedule();
      })
      .then(
        (results: EnqueueResult[]) => {
          for (const [i, p] of batch.entries()) {
            const r = results[i];
            if (r.ok) p.resolve(r);
            else p.reject(r.error);
          }
        },
        (error: unknown) => {
          for (const p of batch) p.reject(error);
        },
      );
  }
}
