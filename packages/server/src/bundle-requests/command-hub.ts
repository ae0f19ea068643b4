// Wakes the long polls of `guard-agent daemon` (GET /v1/agent/commands) when a request for
// their agent is created, or their tenant's detection policy changed, in this process. A poll also looks at the database again every
// RECHECK_MS, so a request created by another replica (PostgreSQL) is picked up within that
// even without a wake-up, and every poll ends by its bounded wait. close() ends all polls at
// once (shutdown: nothing holds the server for a poll's wait).

/** A held poll looks at the database again this often (requests made by another replica). */
export const RECHECK_MS = 5_000;

type Waiters = Map<string, Set<() => void>>;

function join(map: Waiters, key: string, end: () => void): () => void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  const waiting = set;
  waiting.add(end);
  return () => {
    waiting.delete(end);
    if (waiting.size === 0 && map.get(key) === waiting) map.delete(key);
  };
}

export class CommandHub {
  readonly #waiting: Waiters = new Map();
  readonly #byTenant: Waiters = new Map();
  #closed = false;

  /** Ends every poll of this agent now (a request for it was created). */
  wake(agentId: string): void {
    for (const end of [...(this.#waiting.get(agentId) ?? [])]) end();
  }

  /** Ends every poll of this tenant's agents now (its detection policy changed). */
  wakeTenant(tenantId: string): void {
    for (const end of [...(this.#byTenant.get(tenantId) ?? [])]) end();
  }

  /**
   * Resolves after `ms`, or earlier: on wake(agentId), on wakeTenant(tenantId) when the poll
   * names its tenant, when `signal` aborts (the client went away), or on close().
   */
  wait(agentId: string, ms: number, signal?: AbortSignal, tenantId?: string): Promise<void> {
    if (this.#closed || ms <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', end);
        leaveAgent();
        leaveTenant?.();
        resolve();
      };
      const timer = setTimeout(end, ms);
      signal?.addEventListener('abort', end, { once: true });
      const leaveAgent = join(this.#waiting, agentId, end);
      const leaveTenant = tenantId === undefined ? undefined : join(this.#byTenant, tenantId, end);
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
