// When to try a failed delivery again (DESIGN §5): about immediately, 5 s, 5 min, 30 min,
// 2 h, 5 h, 10 h, 10 h — then the delivery is failed. ±20 % jitter spreads retries of many
// deliveries that failed together. A Retry-After from the receiver (read by @guard/contract's
// parseRetryAfter, as the agent reads the service's) is honoured when it asks for longer
// (capped). Pure: attempts, randomness and the header's delay come in as arguments.

export const DEFAULT_RETRY_SCHEDULE_MS = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
export const JITTER = 0.2;
export const RETRY_AFTER_MAX_MS = 24 * 3600 * 1000;

/**
 * Delay before attempt `attemptsSoFar + 1`, or undefined when the schedule is exhausted.
 * `schedule[i]` is the wait before the (i+1)-th attempt; schedule[0] is the first try.
 */
export function nextRetryDelay(
  schedule: readonly number[],
  attemptsSoFar: number,
  random: () => number,
  retryAfterMs?: number,
): number | undefined {
  if (attemptsSoFar >= schedule.length) return undefined;
  const base = schedule[attemptsSoFar];
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * random()));
  if (retryAfterMs !== undefined && retryAfterMs > jittered) return Math.min(retryAfterMs, RETRY_AFTER_MAX_MS);
  return jittered;
}
