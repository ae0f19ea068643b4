// An endpoint's health (issue 14, item 3): its failing streak (since when, how many attempts
// in a row, which alert thresholds it announced), kept on the endpoint row by the outcome
// writer, and its attempts counted per hour (webhook_endpoint_stats) for its success rate.
// Pure helpers shared by both queues, and the view the API shows.

import type { EndpointHealth, OutcomeDecision } from './outcome-policy.ts';

/** Attempts to add per (endpoint, hour), keyed by both. */
export type AttemptCounts = Map<string, { endpointId: string; hour: string; succeeded: number; failed: number }>;

/** The hour an attempt counts in for the endpoint's success rate. */
export function statsHour(startedAt: string): string {
  return `${startedAt.slice(0, 13)}:00:00.000Z`;
}

/** The endpoint's health after a decision (the same object when nothing changed). */
export function healthAfter(h: EndpointHealth, d: OutcomeDecision): EndpointHealth {
  if (d.failingSince === undefined && d.failureStreak === undefined && d.alert === undefined) return h;
  return {
    ...h,
    failingSince: d.failingSince !== undefined ? d.failingSince : h.failingSince,
    failureStreak: d.failureStreak ?? h.failureStreak,
    // A streak that starts or ends has announced nothing yet.
    alertedPercent: d.alert ? d.alert.percent : d.failingSince !== undefined ? 0 : h.alertedPercent,
  };
}

export function lastErrorOf(d: OutcomeDecision): string {
  return d.delivery.kind === 'succeeded' ? '' : d.delivery.lastError;
}

/** Adds an attempt to its endpoint's count for the hour it started in. */
export function countAttempt(stats: AttemptCounts, endpointId: string, d: OutcomeDecision): void {
  if (!d.attempt) return;
  const hour = statsHour(d.attempt.startedAt);
  const key = `${endpointId} ${hour}`;
  let c = stats.get(key);
  if (!c) {
    c = { endpointId, hour, succeeded: 0, failed: 0 };
    stats.set(key, c);
  }
  if (d.outcome === 'succeeded') c.succeeded++;
  else c.failed++;
}
