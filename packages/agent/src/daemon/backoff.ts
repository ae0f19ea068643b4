// How long the daemon waits before it calls the service again after a failure (the service
// away, a proxy down, a 5xx): exponential from RECONNECT_BASE_MS, capped at RECONNECT_MAX_MS,
// with "equal jitter" (uniformly in [d/2, d)), so a fleet of agents that lost the service at
// the same moment does not come back in step. Pure: the random source comes in.

export const RECONNECT_BASE_MS = 1000;
export const RECONNECT_MAX_MS = 60_000;

/** Delay before the next try after `failures` failures in a row (1 = the first); random in [0, 1). */
export function reconnectDelay(failures: number, random: () => number): number {
  if (!Number.isInteger(failures) || failures < 1)
    throw new RangeError(`failures must be an integer >= 1, got ${failures}`);
  const ceiling = Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** Math.min(failures - 1, 30));
  const r = Math.min(Math.max(random(), 0), 1 - Number.EPSILON);
  return Math.floor(ceiling / 2 + r * (ceiling / 2));
}
