// What an attempt's outcome means for its delivery and its endpoint (DESIGN §5): a 2xx
// succeeds and ends the endpoint's failing streak; anything else is retried at the next
// scheduled time (retry-schedule.ts), or failed once the schedule is exhausted or the endpoint
// is disabled; a failure starts the endpoint's failing streak, and a streak older than
// `disableAfterMs` disables the endpoint. A `410 Gone` answer disables it at once (Standard
// Webhooks): the receiver says it is no more. A delivery that can no longer be made (its signal is
// gone, its endpoint disabled or deleted) is failed without an attempt. While a streak
// lasts, its crossing of 50 %, 75 % and 90 % of the disable window is announced once each
// (an `endpoint.failing` operational event: operational-events.ts); the disabling itself is
// announced too (`endpoint.disabled`). Both are judged at a failed attempt, as the disabling
// always was.
//
// Pure: the outcome, the endpoint's health as the delivery queue read it in the transaction
// that records the outcome, the clock and the randomness come in; the queue only writes what
// comes out (delivery-queue.ts).

import { parseRetryAfter } from '@guard/contract/retry-after';
import { nextRetryDelay } from './retry-schedule.ts';

/** What one attempt came to, as the worker's send step saw it. */
export type AttemptResult =
  /** The receiver answered (any status: 3xx and 4xx are failures too). */
  | {
      kind: 'response';
      status: number;
      retryAfter: string | readonly string[] | undefined;
      excerpt: string;
      /** The headers to keep, as response-headers.ts stores them (JSON). */
      headers?: string;
    }
  /** No answer: timeout, connection or TLS error, refused address, or an internal error. */
  | { kind: 'error'; error: string }
  /** Nothing was sent: the delivery can no longer be made, and is failed. */
  | { kind: 'abandoned'; reason: string };

/** One attempt (or abandoned delivery), waiting to be recorded. */
export interface AttemptOutcome {
  delivery: { id: string; endpoint_id: string; tenant_id: string; signal_id: string };
  /** The attempt's number: the delivery's attempts so far + 1. */
  attempt: number;
  startedAt: Date;
  durationMs: number;
  result: AttemptResult;
  /**
   * A test event (or a secret rotation's proof, which is one): its failure moves no endpoint's
   * failing streak, so it never raises the failing banner, an alert or a disabling (but a 410
   * Gone still disables); its success ends a streak like any 2xx (the receiver answers again).
   */
  testEvent?: boolean;
  /**
   * What the request carried that cannot be rebuilt later (the attempt view shows it): the
   * Guard-Signature and webhook-signature as sent (each entry during a rotation) and the
   * traceparent. Undefined when nothing was sent.
   */
  sent?: { signature: string; standardSignature: string; traceparent: string | null };
}

/** The endpoint's state that the decision depends on; undefined when it was deleted. */
export interface EndpointHealth {
  enabled: boolean;
  /** Start of the current unbroken run of failed attempts, or null. */
  failingSince: string | null;
  /** Failed attempts in a row. */
  failureStreak: number;
  /** The highest alert threshold (percent) announced in this streak; 0: none yet. */
  alertedPercent: number;
}

/** Thresholds of the disable window at which a failing endpoint is announced, once each per streak. */
export const ALERT_PERCENTS = [50, 75, 90] as const;

/** A threshold crossed: announced as `endpoint.failing`. */
export interface FailingAlert {
  percent: number;
  failingSince: string;
  /** When the endpoint is disabled unless an attempt succeeds first. */
  disableAt: string;
  /** When the crossing was judged (the batch's time). */
  at: string;
}

/** The new state of the delivery row (its lease is released in every case). */
export type DeliveryUpdate =
  | { kind: 'succeeded'; attempts: number; lastStatus: number; completedAt: string }
  | { kind: 'retry'; attempts: number; lastStatus: number | null; lastError: string; nextAttemptAt: string }
  | { kind: 'failed'; attempts: number; lastStatus: number | null; lastError: string; completedAt: string }
  /** Failed without an attempt: attempts and last_status stay as they were. */
  | { kind: 'abandoned'; lastError: string; completedAt: string };

/** A row of the attempt log. */
export interface AttemptRecord {
  attempt: number;
  startedAt: string;
  durationMs: number;
  status: number | null;
  error: string | null;
  responseExcerpt: string | null;
  /** The response headers kept (response-headers.ts), JSON; null without a response. */
  responseHeaders?: string | null;
}

export interface OutcomeDecision {
  /** The metric label (guard_webhook_deliveries_total{outcome}). */
  outcome: 'succeeded' | 'retrying' | 'failed';
  delivery: DeliveryUpdate;
  /** The attempt log row; undefined when nothing was sent. */
  attempt: AttemptRecord | undefined;
  /** The endpoint's failing streak afterwards: its start, null when it ended, undefined when unchanged. */
  failingSince: string | null | undefined;
  /** Failed attempts in a row afterwards; undefined when unchanged. */
  failureStreak: number | undefined;
  /** Set when this failure crossed an alert threshold not yet announced in the streak. */
  alert: FailingAlert | undefined;
  /** Set when the endpoint is to be disabled, with its pending deliveries failed. */
  disable: { reason: string; at: string } | undefined;
}

export interface OutcomePolicyOptions {
  schedule: readonly number[];
  /** An endpoint failing without a break for this long is disabled. */
  disableAfterMs: number;
}

/**
 * Decides one outcome. `endpoint` is the endpoint's health after the outcomes recorded before
 * this one in the same batch; `now` is when the batch is recorded.
 */
export function decideOutcome(
  o: AttemptOutcome,
  endpoint: EndpointHealth | undefined,
  options: OutcomePolicyOptions,
  now: Date,
  random: () => number,
): OutcomeDecision {
  const nowIso = now.toISOString();
  const r = o.result;
  if (r.kind === 'abandoned')
    return {
      outcome: 'failed',
      delivery: { kind: 'abandoned', lastError: r.reason, completedAt: nowIso },
      attempt: undefined,
      failingSince: undefined,
      failureStreak: undefined,
      alert: undefined,
      disable: undefined,
    };

  const status = r.kind === 'response' ? r.status : null;
  const excerpt = r.kind === 'response' ? r.excerpt : null;
  const record = (error: string | null): AttemptRecord => ({
    attempt: o.attempt,
    startedAt: o.startedAt.toISOString(),
    durationMs: o.durationMs,
    status,
    error,
    responseExcerpt: excerpt,
    responseHeaders: r.kind === 'response' ? (r.headers ?? null) : null,
  });

  if (status !== null && status >= 200 && status < 300)
    return {
      outcome: 'succeeded',
      delivery: { kind: 'succeeded', attempts: o.attempt, lastStatus: status, completedAt: nowIso },
      attempt: record(null),
      // A success ends a failing streak.
      failingSince: endpoint && endpoint.failingSince !== null ? null : undefined,
      failureStreak: endpoint && endpoint.failureStreak !== 0 ? 0 : undefined,
      alert: undefined,
      disable: undefined,
    };

  const redirect = status !== null && status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
  const error = r.kind === 'error' ? r.error : `HTTP ${status}${redirect}`;
  // An endpoint disabled (or deleted) while this attempt was in flight gets no retry: its
  // pending deliveries were failed when it was disabled.
  const retryAfter = r.kind === 'response' ? parseRetryAfter(r.retryAfter, now.getTime()) : undefined;
  // 410 Gone: the receiver says the endpoint is no more (Standard Webhooks); no retry.
  const gone = status === 410;
  const delay =
    endpoint?.enabled && !gone ? nextRetryDelay(options.schedule, o.attempt, random, retryAfter) : undefined;
  const delivery: DeliveryUpdate =
    delay === undefined
      ? { kind: 'failed', attempts: o.attempt, lastStatus: status, lastError: error, completedAt: nowIso }
      : {
          kind: 'retry',
          attempts: o.attempt,
          lastStatus: status,
          lastError: error,
          nextAttemptAt: new Date(now.getTime() + delay).toISOString(),
        };
  const decision: OutcomeDecision = {
    outcome: delay === undefined ? 'failed' : 'retrying',
    delivery,
    attempt: record(error),
    failingSince: undefined,
    failureStreak: undefined,
    alert: undefined,
    disable: undefined,
  };
  if (!endpoint?.enabled) return decision;
  if (gone) {
    decision.failureStreak = endpoint.failureStreak + 1;
    if (endpoint.failingSince === null) decision.failingSince = o.startedAt.toISOString();
    decision.disable = { reason: 'disabled: the receiver answered 410 Gone (the endpoint is no more)', at: nowIso };
    return decision;
  }
  // A test event that fails says nothing of the endpoint's deliveries (it is how an admin
  // checks a receiver being set up): no streak, so no failing banner, alert or disabling.
  if (o.testEvent) return decision;
  decision.failureStreak = endpoint.failureStreak + 1;
  // A failure starts the endpoint's failing streak; one that has lasted disableAfterMs disables it.
  if (endpoint.failingSince === null) {
    decision.failingSince = o.startedAt.toISOString();
    return decision;
  }
  const elapsedMs = now.getTime() - Date.parse(endpoint.failingSince);
  if (elapsedMs >= options.disableAfterMs) {
    decision.disable = {
      reason: `disabled automatically: every delivery attempt failed since ${endpoint.failingSince} (last: ${error})`,
      at: nowIso,
    };
    return decision;
  }
  // The highest threshold passed, if not announced yet (thresholds skipped between two
  // failures are not announced late: the newest one says more).
  const percent = ALERT_PERCENTS.findLast((p) => elapsedMs >= (options.disableAfterMs * p) / 100);
  if (percent !== undefined && percent > endpoint.alertedPercent)
    decision.alert = {
      percent,
      failingSince: endpoint.failingSince,
      disableAt: new Date(Date.parse(endpoint.failingSince) + options.disableAfterMs).toISOString(),
      at: nowIso,
    };
  return decision;
}
