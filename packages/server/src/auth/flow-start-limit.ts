// Sign-ins that anyone may start: single sign-on's starts (GET /v1/auth/oidc/start and
// /v1/auth/saml/start) and a password-less passkey's options (POST /v1/auth/passkey/options).
// Each start writes a row (auth_flows, flows.ts) that lives until it expires, before anyone
// has proved who they are; unlimited, one address could fill the table and keep the database
// busy writing it. Routes marked `config: { startsFlow: true }` are limited per client address
// (the TCP peer's, as the login limits): FLOW_START_LIMITS.perAddress starts per window, then
// 429 too_many_attempts with Retry-After until the window ends. A person signing in starts a
// few; the limit is far above that.
//
// Counted in this process's memory, not in the database (a row per start to count starts
// would be the very write it limits): N replicas allow N times as many starts, each still
// bounded. The addresses held are bounded too (maxAddresses; the oldest go first).

export interface FlowStartLimits {
  perAddress: number;
  windowMs: number;
  /** The most addresses remembered at once. */
  maxAddresses: number;
}

export const FLOW_START_LIMITS: FlowStartLimits = { perAddress: 60, windowMs: 60_000, maxAddresses: 50_000 };

export class FlowStartLimiter {
  readonly #limits: FlowStartLimits;
  /** Per address: when its window began, and the starts counted in it (insertion order: oldest first). */
  readonly #windows = new Map<string, { startMs: number; count: number }>();

  constructor(limits: FlowStartLimits = FLOW_START_LIMITS) {
    this.#limits = limits;
  }

  /** Counts a start from `address`: undefined when it may go on, else the seconds until it may. */
  take(address: string, nowMs: number): number | undefined {
    const { perAddress, windowMs } = this.#limits;
    let w = this.#windows.get(address);
    if (!w || nowMs - w.startMs >= windowMs) {
      this.#windows.delete(address);
      this.#makeRoom(nowMs);
      w = { startMs: nowMs, count: 0 };
      this.#windows.set(address, w);
    }
    if (w.count >= perAddress) return Math.max(1, Math.ceil((w.startMs + windowMs - nowMs) / 1000));
    w.count++;
    return undefined;
  }

  /** Below maxAddresses: the windows that ended go, then the oldest. */
  #makeRoom(nowMs: number): void {
    if (this.#windows.size < this.#limits.maxAddresses) return;
    for (const [address, w] of this.#windows)
      if (nowMs - w.startMs >= this.#limits.windowMs) this.#windows.delete(address);
    for (const address of this.#windows.keys()) {
      if (this.#windows.size < this.#limits.maxAddresses) break;
      this.#windows.delete(address);
    }
  }
}
