// Retry policy of the agent's HTTP calls (DESIGN §4: retry a step on connection errors, 429
// and 5xx with backoff, a few tries, never on other 4xx). Pure functions only: the caller
// supplies the attempt number, the random source and the clock, so every rule is unit-tested.

/** Tries per step, the first one included. */
export const MAX_ATTEMPTS = 4;
/** Backoff before the first retry, doubled for each further one (before jitter). */
export const BASE_DELAY_MS = 1000;
/** No backoff grows beyond this. */
export const MAX_DELAY_MS = 30_000;
/**
 * The longest Retry-After the agent waits for. A service that asks for more is not retried
 * within this run: the error says when to try again instead of leaving a CLI hanging.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Delay before retry number `attempt` (1 = the first retry): exponential backoff with "equal
 * jitter", i.e. uniformly in [d/2, d) where d = min(MAX_DELAY_MS, BASE_DELAY_MS * 2^(attempt-1)).
 * Half of the delay is kept so that retries never hammer a struggling service back to back;
 * the random half spreads agents that failed at the same moment. `random` returns [0, 1).
 */
export function nextDelay(attempt: number, random: () => number): number {
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new RangeError(`attempt must be an integer >= 1, got ${attempt}`);
  const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.min(attempt - 1, 30));
  const r = Math.min(Math.max(random(), 0), 1 - Number.EPSILON);
  return Math.floor(ceiling / 2 + r * (ceiling / 2));
}

/** Statuses worth another try: 429 Too Many Requests and every 5xx. Other 4xx are final. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: string };

/**
 * Whether to try a failed step again, and after how long.
 *  - `attempt`: the number of the try that just failed (1 = the first).
 *  - `retryAfterMs`: the parsed Retry-After of the failed response, if any; it replaces the
 *    backoff (the service knows best), unless it exceeds MAX_RETRY_AFTER_MS.
 *  - `deadlineMs`: an absolute time after which a retry is useless (the presigned URL's
 *    expiry for the PUT); a retry that would start at or after it is not made.
 */
export function decideRetry(opts: {
  attempt: number;
  random: () => number;
  nowMs: number;
  retryAfterMs?: number;
  deadlineMs?: number;
  maxAttempts?: number;
}): RetryDecision {
  const max = opts.maxAttempts ?? MAX_ATTEMPTS;
  if (opts.attempt >= max) return { retry: false, reason: `gave up after ${opts.attempt} attempts` };
  let delayMs: number;
  if (opts.retryAfterMs !== undefined) {
    if (opts.retryAfterMs > MAX_RETRY_AFTER_MS)
      return {
        retry: false,
        reason: `the service asked to retry after ${Math.ceil(opts.retryAfterMs / 1000)} s; try again later`,
      };
    delayMs = opts.retryAfterMs;
  } else {
    delayMs = nextDelay(opts.attempt, opts.random);
  }
  if (opts.deadlineMs !== undefined && opts.nowMs + delayMs >= opts.deadlineMs)
    return { retry: false, reason: 'not retried: the presigned URL expires before another try could start' };
  return { retry: true, delayMs };
}
