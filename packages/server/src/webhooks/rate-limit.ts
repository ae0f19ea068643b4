// Per-endpoint rate limit (issue 14, item 5): at most `rate` deliveries a second, by GCRA (the
// generic cell rate algorithm: a token bucket kept as one number, the theoretical arrival
// time `tat`). Deliveries beyond the limit are not claimed, so they wait in the queue and are
// never failed because of it. Pure: both queues call it inside their claim, with the
// endpoint's `tat` in webhook_endpoint_rates (on PostgreSQL read and written under the
// endpoint's claim lock, so the limit holds across replicas); editing the limit deletes it.

/** A tenth of a second's worth may go at once (at least one): claims need not come every 1/rate s. */
export function burstOf(rate: number): number {
  return Math.max(1, Math.floor(rate / 10));
}

const intervalMs = (rate: number) => 1000 / rate;

/** How many deliveries may start at `nowMs`. */
export function allowance(rate: number, tatMs: number, nowMs: number): number {
  const t = intervalMs(rate);
  const tau = (burstOf(rate) - 1) * t;
  const base = Math.max(tatMs, nowMs);
  return Math.max(0, Math.floor((nowMs + tau - base) / t + 1e-9) + 1);
}

/** The `tat` after `n` deliveries started at `nowMs`. */
export function advance(rate: number, tatMs: number, nowMs: number, n: number): number {
  return Math.max(tatMs, nowMs) + n * intervalMs(rate);
}

/** When the next delivery may start. */
export function nextAllowedMs(rate: number, tatMs: number): number {
  return tatMs - (burstOf(rate) - 1) * intervalMs(rate);
}

/**
 * Wake-ups for a queue's rate-limited endpoints: calls `wake` at each moment asked for (an
 * endpoint that sent, or was held back, may send again then), earliest first, with one timer.
 * Needed because the claim leaves an endpoint its limit holds back out altogether: nothing
 * else would look at it again before the worker's next poll.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class RateWakeups {
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires (Date.now() ms), and the moments still to come after it. */
  private armedAt = Number.POSITIVE_INFINITY;
  private readonly moments = new Set<number>();
  private wake: (() => void) | undefined;

  /** Starts (with the queue's watcher) or stops (undefined) waking. */
  setWake(wake: (() => void) | undefined): void {
    this.wake = wake;
    if (!wake) this.clear();
  }

  /** Wake at `ms` on the caller's clock, whose now is `nowMs`. */
  at(ms: number, nowMs: number): void {
    if (!this.wake) return;
    const due = Date.now() + Math.max(1, Math.ceil(ms - nowMs));
    this.moments.add(due);
    if (due < this.armedAt) this.arm(due);
  }

  private arm(due: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = due;
    // setTimeout takes at most 2^31 − 1 ms (a longer delay fires at once): wake then and look again.
    this.timer = setTimeout(() => this.fire(), Math.min(MAX_TIMER_MS, Math.max(1, due - Date.now())));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const m of this.moments) {
      if (m <= now) this.moments.delete(m);
      else next = Math.min(next, m);
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
    this.wake?.();
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    this.moments.clear();
  }
}
