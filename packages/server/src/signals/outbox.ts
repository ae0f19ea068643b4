// The outbox: a signal and one delivery per enabled endpoint of its tenant are written in one
// transaction (the delivery queue's enqueue), so a crash at any point loses no delivery.
// Signals created in the same turn of the event loop share that transaction (group commit:
// one commit instead of one per request, the largest cost of ingest); the queue isolates
// each, so a row that fails fails only its own request. At most `maxInFlight` transactions
// run at once (the kernel's TurnBatcher): signals that arrive meanwhile wait and go together in
// the next one, so the slower a commit (PostgreSQL's round trips and WAL flush), the more each
// one carries.
// A signal that finds nothing in flight goes at once. An agent's idempotency key that a signal
// holds already (even one written by the same batch, or committed by another replica while this
// batch waited on the key) writes nothing: that signal answers (the queue's `existing`).

import type { SignalTable } from '../db/index.ts';
import { type BatchResult, TurnBatcher } from '../kernel/turn-batcher.ts';
import type { DeliveryQueue, EnqueueResult, OutboxEntry } from '../webhooks/index.ts';

const BATCH_MAX = 256;

type Written = Extract<EnqueueResult, { ok: true }>;

/** What a signal POST answers: the signal, its deliveries, and whether this request created it. */
export interface SignalWritten {
  signalId: string;
  deliveries: number;
  /** false: the agent's idempotency key named a signal already, which answers instead; nothing was written. */
  created: boolean;
}

export class SignalOutbox {
  private readonly batches: TurnBatcher<OutboxEntry, Written>;

  constructor(queue: Pick<DeliveryQueue, 'enqueue'>, options: { maxInFlight?: number } = {}) {
    this.batches = new TurnBatcher(async (entries) => (await queue.enqueue(entries)).map(asBatchResult), {
      maxBatch: BATCH_MAX,
      maxInFlight: options.maxInFlight ?? Number.POSITIVE_INFINITY,
    });
  }

  /**
   * Writes the signal and its deliveries (to one endpoint only with `onlyEndpointId`, for a
   * test event); resolves with the delivery ids once committed.
   */
  async write(signal: SignalTable, onlyEndpointId?: string): Promise<string[]> {
    return (await this.batches.submit({ signal, onlyEndpointId })).deliveryIds;
  }

  /**
   * Writes an agent's signal, unless its idempotency key (signal.idempotency_key, per agent)
   * names a signal already: then nothing is written and that signal answers.
   */
  async writeOnce(signal: SignalTable): Promise<SignalWritten> {
    const written = await this.batches.submit({ signal, onlyEndpointId: undefined });
    return written.existing
      ? { signalId: written.existing.signalId, deliveries: written.existing.deliveries, created: false }
      : { signalId: signal.id, deliveries: written.deliveryIds.length, created: true };
  }
}

const asBatchResult = (result: EnqueueResult): BatchResult<Written> =>
  result.ok ? { ok: true, value: result } : result;
