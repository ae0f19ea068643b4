// The delivery queue: the persistent side of webhook delivery, one interface with one
// implementation per database engine (delivery-queue-sqlite.ts, delivery-queue-postgres.ts), so
// that the worker (worker.ts) and the outbox (signals/outbox.ts) never see SQL.
//
// Invariants every implementation keeps (DESIGN §5, at-least-once):
// - a signal and its deliveries are written in one transaction (the outbox);
// - a claim is a lease that expires: a delivery whose holder died is claimable again once
//   `lease_until` has passed, and is then sent again with the same id (Guard-Delivery);
// - an outcome is written only to a delivery that still exists, in one transaction with its
//   attempt row and the endpoint's health, and releases the lease.
// The decisions (retry time, failed, endpoint streak and disabling) are not the queue's: they
// come from a pure policy (outcome-policy.ts) that the queue calls with the endpoint's health
// as read inside the recording transaction.

import type { SignalTable, WebhookDeliveryTable, WebhookEndpointTable } from '../db/index.ts';
import type { AttemptOutcome, EndpointHealth, OutcomeDecision } from './outcome-policy.ts';

/** One signal for the outbox. */
export interface OutboxEntry {
  signal: SignalTable;
  /**
   * Deliver to this endpoint only (a test event); otherwise to every enabled endpoint of the
   * tenant that subscribes to the entry's event type (and, for a signal, whose severity and
   * signal type filters it passes: subscriptions.ts).
   */
  onlyEndpointId?: string;
  /** Never to this endpoint (the one an operational event is about). */
  excludeEndpointId?: string;
}

/** Per entry: the ids of the deliveries written, or why this entry alone was refused. */
export type EnqueueResult = { ok: true; deliveryIds: string[] } | { ok: false; error: unknown };

export interface ClaimRequest {
  now: Date;
  /** The lease runs until now + leaseMs. */
  leaseMs: number;
  /** At most this many deliveries in all. */
  limit: number;
  /** At most this many deliveries per endpoint, counting `busy`. */
  perEndpoint: number;
  /**
   * Attempts in flight per endpoint id in the claiming process, counted against
   * `perEndpoint`. An engine shared by several processes (PostgreSQL) adds the live leases the
   * other processes hold, from the table (each lease names its holder: `leased_by`).
   */
  busy: ReadonlyMap<string, number>;
}

/** The endpoint columns an attempt needs; the secret and header values still sealed. */
export type DeliveryEndpointRow = Pick<
  WebhookEndpointTable,
  | 'id'
  | 'updated_at'
  | 'url'
  | 'enabled'
  | 'secret_sealed'
  | 'headers'
  | 'previous_secret_sealed'
  | 'previous_secret_expires_at'
  | 'rotation_proof_signal_id'
>;

/** A leased delivery with its signal and endpoint, read in the claim's transaction. */
export interface ClaimedDelivery {
  delivery: WebhookDeliveryTable;
  /** undefined when the signal no longer exists. */
  signal: SignalTable | undefined;
  /** undefined when the endpoint no longer exists. Claims of one endpoint share one object. */
  endpoint: DeliveryEndpointRow | undefined;
}

/**
 * Decides one outcome from the endpoint's health (undefined: the endpoint was deleted), as it
 * stands after the outcomes before it in the batch. Pure: see outcome-policy.ts.
 */
export type OutcomePolicy = (outcome: AttemptOutcome, endpoint: EndpointHealth | undefined) => OutcomeDecision;

export interface RecordedOutcomes {
  /** Per outcome, in order: the decision written, or undefined when the delivery no longer exists. */
  decisions: (OutcomeDecision | undefined)[];
  /** Endpoints disabled by this batch, by id, with the reason. */
  disabled: Map<string, string>;
}

export interface DeliveryQueue {
  /**
   * The outbox: writes each signal with one pending delivery (due at once) per enabled
   * endpoint of its tenant, all entries in one transaction (group commit), each isolated so
   * that an entry that fails (a duplicate id) fails alone. Rejects when the transaction fails.
   */
  enqueue(entries: readonly OutboxEntry[]): Promise<EnqueueResult[]>;

  /**
   * Leases due deliveries, oldest first: pending ones whose time has come and delivering ones
   * whose lease has expired, within the request's limits.
   */
  claim(request: ClaimRequest): Promise<ClaimedDelivery[]>;

  /**
   * Releases every lease at once (an embedded database with one owner, at start: the leases of
   * a crashed run need not be waited out). Returns how many were released. Never on a database
   * that replicas share: the others hold live leases.
   */
  releaseAllLeases(): Promise<number>;

  /**
   * Calls `onWork` when another process may have made work due (PostgreSQL: LISTEN on the
   * channel enqueue NOTIFYs); a no-op where one process owns the queue. Resolves once
   * listening; the function it resolves to stops.
   */
  watch(onWork: () => void): Promise<() => Promise<void>>;

  /**
   * Records a batch of outcomes in one transaction: per outcome, the policy's decision on the
   * delivery row, the attempt row and the endpoint's failing streak; then the endpoints the
   * batch disabled (their pending deliveries failed).
   */
  recordOutcomes(outcomes: readonly AttemptOutcome[], policy: OutcomePolicy): Promise<RecordedOutcomes>;
}
