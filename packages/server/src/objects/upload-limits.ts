// Limits of the upload PUT (docs/guard-server.md, "Limits"): how many PUTs may stream at once,
// in total and per tenant (each holds a socket, two 1 MiB write buffers and a partial file),
// and how long a PUT may go without receiving a byte. A PUT has no total deadline: a 2 GiB
// bundle over a slow link legitimately takes hours, as long as its bytes keep coming.

/** Seconds a PUT refused for the caps is told to wait (`Retry-After`). */
export const UPLOAD_RETRY_AFTER_SECONDS = 5;

/** Counts PUTs in flight; acquire refuses one over the total or its tenant's cap. */
export class UploadSlots {
  private readonly max: number;
  private readonly maxPerTenant: number;
  private total = 0;
  private readonly byTenant = new Map<string, number>();

  constructor(caps: { max: number; maxPerTenant: number }) {
    this.max = caps.max;
    this.maxPerTenant = caps.maxPerTenant;
  }

  /** Takes a place for one PUT of `tenantId`; false when a cap is reached (nothing taken). */
  acquire(tenantId: string): boolean {
    const mine = this.byTenant.get(tenantId) ?? 0;
    if (this.total >= this.max || mine >= this.maxPerTenant) return false;
    this.total++;
    this.byTenant.set(tenantId, mine + 1);
    return true;
  }

  /** Gives back a place taken by acquire (exactly once per successful acquire). */
  release(tenantId: string): void {
    const mine = this.byTenant.get(tenantId) ?? 0;
    if (mine <= 0) throw new Error(`no upload place of tenant ${tenantId} to release`);
    this.total--;
    if (mine === 1) this.byTenant.delete(tenantId);
    else this.byTenant.set(tenantId, mine - 1);
  }

  inFlight(tenantId?: string): number {
    return tenantId === undefined ? this.total : (this.byTenant.get(tenantId) ?? 0);
  }
}

export class UploadIdleError extends Error {
  readonly idleMs: number;
  constructor(idleMs: number) {
    super(`no byte of the body arrived for ${idleMs / 1000} s`);
    this.name = 'UploadIdleError';
    this.idleMs = idleMs;
  }
}

/**
 * Yields `body`'s chunks; throws UploadIdleError when the next chunk does not come within
 * `idleMs` of asking for it (time the consumer spends on a chunk, writing it to disk, does not
 * count). After an idle timeout the body is left as it is, so the caller can still answer on
 * its connection before closing it; when the consumer stops early for another reason the body
 * is closed, as a plain for-await would.
 */
export async function* idleGuarded(body: AsyncIterable<Buffer>, idleMs: number): AsyncGenerator<Buffer> {
  const it = body[Symbol.asyncIterator]();
  // Fails the read being waited for. Each read gets its own promise: racing every read
  // against one long-lived "idle" promise would attach a reaction to it per chunk, and each
  // reaction keeps its settled race, and so its chunk, alive until the body ends (a 1 GiB
  // upload held 1 GiB).
  let failWaiting: ((error: UploadIdleError) => void) | undefined;
  const timer = setTimeout(function check() {
    if (failWaiting) failWaiting(new UploadIdleError(idleMs));
    else timer.refresh();
  }, idleMs);
  let finished = false;
  let idled = false;
  try {
    for (;;) {
      const next = it.next();
      timer.refresh();
      let r: IteratorResult<Buffer>;
      try {
        r = await new Promise<IteratorResult<Buffer>>((resolve, reject) => {
          failWaiting = reject;
          next.then(resolve, reject);
        });
      } catch (error) {
        if (error instanceof UploadIdleError) {
          idled = true;
          next.catch(() => {}); // the read left pending fails once the connection closes
        }
        throw error;
      } finally {
        failWaiting = undefined;
      }
      if (r.done) {
        finished = true;
        return;
      }
      yield r.value;
    }
  } finally {
    clearTimeout(timer);
    if (!finished && !idled) await it.return?.();
  }
}
