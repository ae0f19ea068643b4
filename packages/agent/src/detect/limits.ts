// Two counters over time, pure (the caller passes the time):
//   BruteforceWindow  ssh_bruteforce: ≥ 10 failures from one address within 60 s, at most one
//                     signal per address per 10 min (DESIGN §3);
//   FloodLimit        at most PER_MINUTE signals of one type in a minute; the rest are counted
//                     and reported as one summary signal of that type when the minute ends
//                     (docs/detection.md, "Floods").
// Both hold bounded state: the addresses tracked are capped, the oldest forgotten first.

import type { SignalBody } from './signals.ts';

export const BRUTEFORCE_FAILURES = 10;
export const BRUTEFORCE_WINDOW_MS = 60_000;
export const BRUTEFORCE_QUIET_MS = 10 * 60_000;
const MAX_ADDRESSES = 10_000;

export class BruteforceWindow {
  /** Failure times per address within the window, oldest first; Map order is least recently failed first. */
  readonly #failures = new Map<string, number[]>();
  readonly #lastAlert = new Map<string, number>();

  /** Records a failure; the number of failures in the window when this one makes an alert, else undefined. */
  fail(address: string, at: number): number | undefined {
    let times = this.#failures.get(address);
    if (times) this.#failures.delete(address);
    times ??= [];
    times.push(at);
    while (times.length > 0 && times[0] <= at - BRUTEFORCE_WINDOW_MS) times.shift();
    if (times.length > BRUTEFORCE_FAILURES * 4) times.splice(0, times.length - BRUTEFORCE_FAILURES * 4);
    this.#failures.set(address, times);
    if (this.#failures.size > MAX_ADDRESSES) this.#failures.delete(this.#failures.keys().next().value as string);
    if (times.length < BRUTEFORCE_FAILURES) return undefined;
    const last = this.#lastAlert.get(address);
    if (last !== undefined && at - last < BRUTEFORCE_QUIET_MS) return undefined;
    this.#lastAlert.delete(address);
    this.#lastAlert.set(address, at);
    if (this.#lastAlert.size > MAX_ADDRESSES) this.#lastAlert.delete(this.#lastAlert.keys().next().value as string);
    return times.length;
  }
}

export const FLOOD_PER_MINUTE = 20;
const MINUTE_MS = 60_000;

interface Bucket {
  minute: number;
  sent: number;
  suppressed: number;
  maxSeverity: number;
  last: SignalBody | undefined;
}

export class FloodLimit {
  readonly #perMinute: number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(perMinute = FLOOD_PER_MINUTE) {
    this.#perMinute = perMinute;
  }

  /**
   * Whether the signal goes out on its own; the summaries of minutes that ended before `at`
   * come first in `summaries` (they are due now).
   */
  admit(signal: SignalBody, at: number): { send: boolean; summaries: SignalBody[] } {
    const summaries = this.flush(at);
    const minute = Math.floor(at / MINUTE_MS);
    let bucket = this.#buckets.get(signal.signal_type);
    if (!bucket) {
      bucket = { minute, sent: 0, suppressed: 0, maxSeverity: 0, last: undefined };
      this.#buckets.set(signal.signal_type, bucket);
    }
    if (bucket.sent < this.#perMinute) {
      bucket.sent++;
      return { send: true, summaries };
    }
    bucket.suppressed++;
    bucket.maxSeverity = Math.max(bucket.maxSeverity, signal.severity);
    bucket.last = signal;
    return { send: false, summaries };
  }

  /** The summaries of every minute that ended before `at` (call it on a timer, too). */
  flush(at: number): SignalBody[] {
    const minute = Math.floor(at / MINUTE_MS);
    const out: SignalBody[] = [];
    for (const [type, bucket] of this.#buckets) {
      if (bucket.minute >= minute) continue;
      this.#buckets.delete(type);
      if (bucket.suppressed > 0 && bucket.last) out.push(this.#summary(bucket, bucket.last));
    }
    return out;
  }

  #summary(bucket: Bucket, last: SignalBody): SignalBody {
    const from = new Date(bucket.minute * MINUTE_MS).toISOString();
    return {
      signal_type: last.signal_type,
      severity: bucket.maxSeverity,
      description:
        `flood limit: ${bucket.suppressed} more ${last.signal_type} events in the minute from ${from} were not ` +
        `sent one by one (at most ${this.#perMinute} a minute); the last: ${last.description}`.slice(0, 4000),
      identity_id: last.identity_id,
      identity_name: last.identity_name,
      created_at: new Date((bucket.minute + 1) * MINUTE_MS).toISOString(),
    };
  }
}
