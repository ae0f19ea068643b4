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
// come from a pure policy (outcome-policy.ts), which one pure planner shared by both engines
// (outcome-plan.ts) calls with the endpoint's health as read inside the recording
// transaction; each queue only reads the rows the plan needs and writes what it comes to.
// createDeliveryQueue (delivery-queue-engine.ts) picks the implementation of a database.

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

/** The signal an agent's idempotency key already names, and how many deliveries it has. */
export interface ExistingSignal {
  signalId: string;
  deliveries: number;
}

/**
 * Per entry: the ids of the deliveries written, or why this entry alone was refused. With
 * `existing`, nothing was written: its agent's idempotency key names that signal already (an
 * earlier request, another entry of the batch, or a request another replica committed first).
 */
export type EnqueueResult =
  | { ok: true; deliveryIds: string[]; existing?: ExistingSignal }
  | { ok: false; error: unknown };

/** An entry's agent and idempotency key as one map key; undefined when it has none. */
export function idempotencyKeyOf(signal: Pick<SignalTable, 'agent_id' | 'idempotency_key'>): string | undefined {
  return signal.agent_id != null && signal.idempotency_key != null
    ? `${signal.agent_id}\n${signal.idempotency_key}`
    : undefined;
}

/**
 * The answer of an entry whose key an earlier entry of the same batch holds: that entry's
 * signal (written, or found), or its refusal.
 */
export function answerLikeEarlier(earlier: EnqueueResult, earlierSignalId: string): EnqueueResult {
  if (!earlier.ok) return earlier;
  return {
    ok: true,
    deliveryIds: [],
    existing: earlier.existing ?? { signalId: earlierSignalId, deliveries: earlier.deliveryIds.length },
  };
}

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
  | 'tls_client_certificate'
  | 'tls_client_key_sealed'
  | 'tls_ca_certificates'
  | 'auth_sealed'
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
   * that an entry that fails (a duplicate id) fails alone. An entry whose agent's idempotency
   * key a signal holds already writes nothing and answers that signal (`existing`), also when
   * two entries, or two transactions at once, carry the same key. Rejects when the
   * transaction fails.
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

  /**
   * recordOutcomes, then claim, in one transaction, where the engine saves by it (SQLite: one
   * commit instead of two). Where it is absent the worker makes the two calls.
   */
  recordOutcomesAndClaim?(
    outcomes: readonly AttemptOutcome[],
    policy: OutcomePolicy,
    request: ClaimRequest,
  ): Promise<RecordedAndClaimed>;
}

/** What recordOutcomesAndClaim answers: the outcomes' record, then the claim's deliveries. */
export interface RecordedAndClaimed {
  recorded: RecordedOutcomes;
  claimed: ClaimedDelivery[];
}
