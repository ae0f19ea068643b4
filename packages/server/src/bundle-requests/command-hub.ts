// Wakes the long polls of `guard-agent daemon` (GET /v1/agent/commands) when a request for
// their agent is created, in this process. A poll also looks at the database again every
// RECHECK_MS, so a request created by another replica (PostgreSQL) is picked up within that
// even without a wake-up, and every poll ends by its bounded wait. close() ends all polls at
// once (shutdown: nothing holds the server for a poll's wait).

/** A held poll looks at the database again this often (requests made by another replica). */
export const RECHECK_MS = 5_000;

export class CommandHub {
  readonly #waiting = new Map<string, Set<() => void>>();
  #closed = false;

  /** Ends every poll of this agent now (a request for it was created). */
  wake(agentId: string): void {
    for (const end of this.#waiting.get(agentId) ?? []) end();
  }

  /**
   * Resolves after `ms`, or earlier: on wake(agentId), when `signal` aborts (the client went
   * away), or on close().
   */
  wait(agentId: string, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#closed || ms <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      let set = this.#waiting.get(agentId);
      if (!set) {
        set = new Set();
        this.#waiting.set(agentId, set);
      }
      const waiting = set;
      const end = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', end);
        waiting.delete(end);
        if (waiting.size === 0 && this.#waiting.get(agentId) === waiting) this.#waiting.delete(agentId);
        resolve();
      };
      const timer = setTimeout(end, ms);
      signal?.addEventListener('abort', end, { once: true });
      waiting.add(end);
    });
  }

  /** Set once the server is closing: polls answer at once. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Polls held now (for tests and metrics). */
  get held(): number {
    let n = 0;
    for (const set of this.#waiting.values()) n += set.size;
    return n;
  }

  close(): void {
    this.#closed = true;
    for (const set of [...this.#waiting.values()]) for (const end of [...set]) end();
  }
}
