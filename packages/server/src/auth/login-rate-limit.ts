// Failed sign-ins are limited per account and per client address (docs/console.md#rate-limits):
// a sliding window of failure times for each key. Held in memory: the embedded server is one
// process; replicas each keep their own (issue 11 moves it to the database). The clock is
// passed in, so the policy is a pure, tested function of the failures it saw.

export interface LoginLimits {
  windowMs: number;
  perAccount: number;
  perAddress: number;
}

export const LOGIN_LIMITS: LoginLimits = { windowMs: 15 * 60_000, perAccount: 5, perAddress: 20 };

/** Keys tracked at most, per kind: past it the oldest key is dropped (a flood cannot grow memory). */
const MAX_KEYS = 100_000;

class Window {
  readonly #failures = new Map<string, number[]>();
  readonly #limit: number;
  readonly #windowMs: number;

  constructor(limit: number, windowMs: number) {
    this.#limit = limit;
    this.#windowMs = windowMs;
  }

  #recent(key: string, now: number): number[] {
    const times = (this.#failures.get(key) ?? []).filter((t) => now - t < this.#windowMs);
    if (times.length === 0) this.#failures.delete(key);
    else this.#failures.set(key, times);
    return times;
  }

  /** Milliseconds until another try is allowed, or 0. */
  blockedFor(key: string, now: number): number {
    const times = this.#recent(key, now);
    if (times.length < this.#limit) return 0;
    return times[times.length - this.#limit] + this.#windowMs - now;
  }

  fail(key: string, now: number): void {
    const times = this.#recent(key, now);
    times.push(now);
    this.#failures.delete(key); // re-inserted last: Map order is oldest use first
    this.#failures.set(key, times);
    if (this.#failures.size > MAX_KEYS) this.#failures.delete(this.#failures.keys().next().value as string);
  }

  clear(key: string): void {
    this.#failures.delete(key);
  }
}

export class LoginRateLimiter {
  readonly #accounts: Window;
  readonly #addresses: Window;

  constructor(limits: LoginLimits = LOGIN_LIMITS) {
    this.#accounts = new Window(limits.perAccount, limits.windowMs);
    this.#addresses = new Window(limits.perAddress, limits.windowMs);
  }

  /** Whole seconds until this account may try again from this address, or 0 when it may now. */
  retryAfterSeconds(account: string, address: string, now: Date): number {
    const t = now.getTime();
    const ms = Math.max(this.#accounts.blockedFor(account, t), this.#addresses.blockedFor(address, t));
    return ms > 0 ? Math.ceil(ms / 1000) : 0;
  }

  failed(account: string, address: string, now: Date): void {
    this.#accounts.fail(account, now.getTime());
    this.#addresses.fail(address, now.getTime());
  }

  /** A success clears the account's failures (not the address's: one right guess does not open it). */
  succeeded(account: string): void {
    this.#accounts.clear(account);
  }
}
