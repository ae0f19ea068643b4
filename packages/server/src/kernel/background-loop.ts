// The one way the server's background workers run (issue 20, item 6): a pass of work, again
// after a delay the pass chooses, at once when woken, never two passes at a time. The delivery
// worker, the replay feeder and the insights worker each hand it their pass; what differs
// between them is only what a pass does and how long it waits.
//
// - wake(): a pass as soon as the current turn of the event loop is done (setImmediate, so that
//   everything that happened in that turn is taken by one pass); if a pass is running, another
//   follows it at once.
// - A pass returns the milliseconds until the next one (0: at once); a pass that throws is
//   logged and the loop goes on after `retryMs`.
// - stop(): no pass starts any more; resolves once the one running has ended.

export interface BackgroundLoopOptions {
  /** What the loop does, for its log line when a pass fails ("claiming webhook deliveries"). */
  what: string;
  /** The next pass after one that failed. */
  retryMs: number;
  log: { error(obj: object, msg: string): void };
}

export class BackgroundLoop {
  readonly #pass: () => Promise<number>;
  readonly #options: BackgroundLoopOptions;
  #running = false;
  #current: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  #soon: NodeJS.Immediate | undefined;

  constructor(pass: () => Promise<number>, options: BackgroundLoopOptions) {
    this.#pass = pass;
    this.#options = options;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Starts with a pass at once. */
  start(): void {
    this.#running = true;
    this.wake();
  }

  /** A pass now (or right after the one running). */
  wake(): void {
    if (!this.#running) return;
    if (this.#current) {
      this.#again = true;
      return;
    }
    if (this.#soon) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    // Referenced: an unreferenced immediate lets the event loop sleep in its poll until the next
    // timer or socket wakes it (a woken worker then waited 0–11 ms at 50 signals/s). stop()
    // clears it, so it never keeps a stopping process alive.
    this.#soon = setImmediate(() => {
      this.#soon = undefined;
      this.#run();
    });
  }

  /** No more passes; resolves once the one running has ended. */
  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    if (this.#soon) clearImmediate(this.#soon);
    this.#timer = undefined;
    this.#soon = undefined;
    await this.#current;
  }

  /** Resolves once no pass is running or about to run (for tests and for draining). */
  async idle(): Promise<void> {
    while (this.#current || this.#soon) await (this.#current ?? new Promise((r) => setImmediate(r)));
  }

  #run(): void {
    if (!this.#running || this.#current) return;
    this.#current = this.#pass()
      .then(
        (nextMs) => nextMs,
        (error: unknown) => {
          this.#options.log.error({ err: error }, `${this.#options.what} failed`);
          return this.#options.retryMs;
        },
      )
      .then((nextMs) => {
        this.#current = undefined;
        if (!this.#running) return;
        if (this.#again || nextMs <= 0) {
          this.#again = false;
          this.wake();
          return;
        }
        this.#timer = setTimeout(() => {
          this.#timer = undefined;
          this.#run();
        }, nextMs);
        this.#timer.unref();
      });
  }
}
