// The one outcome loop both delivery queues run (issue 20, item 2): from a batch of outcomes
// and the rows the recording transaction read (each endpoint's health, which deliveries still
// exist), the writes to make — delivery rows, attempt rows, streaks, hourly counts, endpoints
// to disable and what to announce. Pure: the policy decides each outcome (outcome-policy.ts),
// this walks the batch in order with each endpoint's health as the outcomes before changed it;
// each queue only reads and writes (delivery-queue-sqlite.ts, delivery-queue-postgres.ts).
//
// Where the two queues used to differ, the plan holds (the PostgreSQL behaviour):
// - a delivery that no longer exists is not decided at all (the SQLite queue decided it, then
//   found its row gone);
// - only an endpoint that exists is disabled (the SQLite queue took a disabling the policy
//   decided for a deleted endpoint, reported it and ran its no-op updates).

import type { OutcomePolicy, RecordedOutcomes } from './delivery-queue.ts';
import { type AttemptCounts, countAttempt, healthAfter, lastErrorOf } from './endpoint-health.ts';
import { type Announcement, noteAnnouncement } from './operational-events.ts';
import type { AttemptOutcome, DeliveryUpdate, EndpointHealth, OutcomeDecision } from './outcome-policy.ts';

/** What the recording transaction read before deciding. */
export interface OutcomeReads {
  /** The health of each endpoint of the batch that exists; an endpoint missing here was deleted. */
  health: ReadonlyMap<string, EndpointHealth>;
  /** The ids of the batch's deliveries that still exist. */
  existing: ReadonlySet<string>;
}

/** One delivery row to update, with its attempt row (undefined when nothing was sent). */
export interface DeliveryWrite {
  outcome: AttemptOutcome;
  update: DeliveryUpdate;
  attempt: OutcomeDecision['attempt'];
}

/** The writes a batch comes to, to be made in this order (announcements read the rows as written). */
export interface OutcomePlan {
  /** Per outcome, in order: its decision, or undefined when its delivery no longer exists. */
  decisions: (OutcomeDecision | undefined)[];
  /** The delivery (and attempt) rows, in the batch's order. */
  deliveries: DeliveryWrite[];
  /** Endpoints whose streak changed, with their health after the batch. */
  health: Map<string, EndpointHealth>;
  /** Attempts to add to the endpoints' hourly counts. */
  counts: AttemptCounts;
  /** Endpoints to disable (their pending deliveries failed), with the reason and time. */
  disable: Map<string, { reason: string; at: string }>;
  /** What to announce (operational events), at most one per endpoint; after the disabling. */
  announcements: Announcement[];
}

/** Decides a batch of outcomes against the rows read, and plans its writes. */
export function planOutcomes(
  outcomes: readonly AttemptOutcome[],
  reads: OutcomeReads,
  policy: OutcomePolicy,
): OutcomePlan {
  const current = new Map(reads.health);
  const plan: OutcomePlan = {
    decisions: [],
    deliveries: [],
    health: new Map(),
    counts: new Map(),
    disable: new Map(),
    announcements: [],
  };
  const announcements = new Map<string, Announcement>();
  for (const o of outcomes) {
    // An outcome whose delivery is gone (its endpoint was deleted meanwhile) writes nothing
    // and moves no endpoint's health.
    if (!reads.existing.has(o.delivery.id)) {
      plan.decisions.push(undefined);
      continue;
    }
    const endpointId = o.delivery.endpoint_id;
    const endpoint = current.get(endpointId);
    const decision = policy(o, endpoint);
    plan.decisions.push(decision);
    plan.deliveries.push({ outcome: o, update: decision.delivery, attempt: decision.attempt });
    if (!endpoint) continue;
    const next = healthAfter(endpoint, decision);
    if (next !== endpoint) {
      current.set(endpointId, next);
      plan.health.set(endpointId, next);
    }
    countAttempt(plan.counts, endpointId, decision);
    noteAnnouncement(
      announcements,
      endpointId,
      { ...decision, lastError: lastErrorOf(decision) },
      o.startedAt.toISOString(),
    );
    if (decision.disable) plan.disable.set(endpointId, decision.disable);
  }
  plan.announcements = [...announcements.values()];
  return plan;
}

/** What recordOutcomes answers for a plan it wrote. */
export function recordedOf(plan: OutcomePlan): RecordedOutcomes {
  const disabled = new Map<string, string>();
  for (const [endpointId, { reason }] of plan.disable) disabled.set(endpointId, reason);
  return { decisions: plan.decisions, disabled };
}
