// An endpoint's health (issue 14, item 3): its failing streak (since when, how many attempts
// in a row, which alert thresholds it announced), kept on the endpoint row by the outcome
// writer, and its attempts counted per hour (webhook_endpoint_stats) for its success rate.
// Pure helpers shared by both queues, and the view the API shows.

import { type Static, Type } from 'typebox';
import type { Db, WebhookEndpointTable } from '../db/index.ts';
import { ALERT_PERCENTS, type EndpointHealth, type OutcomeDecision } from './outcome-policy.ts';

/** The success rate covers the attempts of the last 24 hours (by hour). */
export const HEALTH_WINDOW_HOURS = 24;

export const EndpointHealthView = Type.Object({
  window_hours: Type.Integer({ description: 'the success rate covers the attempts of these last hours' }),
  attempts: Type.Integer({ description: 'attempts in the window' }),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
  success_rate: Type.Union([Type.Number(), Type.Null()], { description: '0…1; null without attempts' }),
  failing_since: Type.Union([Type.String(), Type.Null()]),
  failure_streak: Type.Integer({ description: 'failed attempts in a row' }),
  disable_at: Type.Union([Type.String(), Type.Null()], {
    description: 'while failing: when it is disabled unless an attempt succeeds first (at the first failure after)',
  }),
  alerted_percent: Type.Integer({
    description: `the highest alert threshold (${ALERT_PERCENTS.join(', ')} % of the disable window) announced in this streak; 0: none`,
  }),
});
export type EndpointHealthView = Static<typeof EndpointHealthView>;

/** The health of an endpoint as the API shows it: its streak from the row, its success rate from the hourly counts. */
export async function endpointHealth(
  db: Db,
  e: WebhookEndpointTable,
  now: Date,
  disableAfterMs: number,
): Promise<EndpointHealthView> {
  const from = statsHour(new Date(now.getTime() - (HEALTH_WINDOW_HOURS - 1) * 3_600_000).toISOString());
  const row = await db
    .selectFrom('webhook_endpoint_stats')
    .select((eb) => [eb.fn.sum<number>('succeeded').as('succeeded'), eb.fn.sum<number>('failed').as('failed')])
    .where('endpoint_id', '=', e.id)
    .where('hour', '>=', from)
    .executeTakeFirst();
  const succeeded = Number(row?.succeeded ?? 0);
  const failed = Number(row?.failed ?? 0);
  const attempts = succeeded + failed;
  return {
    window_hours: HEALTH_WINDOW_HOURS,
    attempts,
    succeeded,
    failed,
    success_rate: attempts === 0 ? null : succeeded / attempts,
    failing_since: e.failing_since,
    failure_streak: e.failure_streak,
    disable_at:
      e.failing_since !== null && e.enabled === 1
        ? new Date(Date.parse(e.failing_since) + disableAfterMs).toISOString()
        : null,
    alerted_percent: e.failing_alerted,
  };
}

/** Attempts to add per (endpoint, hour), keyed by both. */
export type AttemptCounts = Map<string, { endpointId: string; hour: string; succeeded: number; failed: number }>;

/** The hour an attempt counts in for the endpoint's success rate. */
export function statsHour(startedAt: string): string {
  return `${startedAt.slice(0, 13)}:00:00.000Z`;
}

/** The endpoint's health after a decision (the same object when nothing changed). */
export function healthAfter(h: EndpointHealth, d: OutcomeDecision): EndpointHealth {
  if (d.failingSince === undefined && d.failureStreak === undefined && d.alert === undefined && !d.disable) return h;
  return {
    ...h,
    // Disabled by this outcome: the batch's later outcomes for it get no retry.
    enabled: h.enabled && !d.disable,
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

/** Hourly counts are kept for twice the window the success rate covers. */
export async function pruneEndpointStats(db: Db, now: Date): Promise<number> {
  const cutoff = statsHour(new Date(now.getTime() - 2 * HEALTH_WINDOW_HOURS * 3_600_000).toISOString());
  const r = await db.deleteFrom('webhook_endpoint_stats').where('hour', '<', cutoff).executeTakeFirst();
  return Number(r.numDeletedRows);
}
