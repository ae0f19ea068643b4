// Per-endpoint rate limit (issue 14, item 5): at most `rate` deliveries a second, by GCRA (the
// generic cell rate algorithm: a token bucket kept as one number, the theoretical arrival
// time `tat`). Deliveries beyond the limit are not claimed, so they wait in the queue and are
// never failed because of it. Pure: both queues call it inside their claim — SQLite with the
// endpoint's `tat` in memory (one process owns the queue), PostgreSQL with it in
// webhook_endpoint_rates, read and written under the endpoint's claim lock, so the limit
// holds across replicas.

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
