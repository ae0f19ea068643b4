// Work asked for in the same turn of the event loop, done together: one statement or one
// transaction for many requests (the outbox's group commit, the agent-key lookup). A batch
// starts in the next turn; while `maxInFlight` batches run, what is asked for meanwhile waits
// and goes together in the next, so the slower a batch, the more the next one carries. Nothing
// waits for a timer: a request that finds nothing in flight goes in the next turn.

/** What one input of a batch came to: its own answer, or its own failure. */
export type BatchResult<Out> = { ok: true; value: Out } | { ok: false; error: unknown };

/**
 * Does one batch; answers one result per input, in the inputs' order. A rejection fails every
 * input of the batch.
 */
export type RunBatch<In, Out> = (inputs: In[]) => Promise<BatchResult<Out>[]>;

interface Waiting<In, Out> {
  input: In;
  resolve: (value: Out) => void;
  reject: (error: unknown) => void;
}

export class TurnBatcher<In, Out> {
  private readonly run: RunBatch<In, Out>;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private waiting: Waiting<In, Out>[] = [];
  private scheduled = false;
  private inFlight = 0;

  /** `maxBatch`: the most inputs one batch takes; `maxInFlight`: the most batches run at once. */
  constructor(run: RunBatch<In, Out>, options: { maxBatch: number; maxInFlight: number }) {
    this.run = run;
    this.maxBatch = options.maxBatch;
    this.maxInFlight = options.maxInFlight;
  }

  /** Resolves with this input's answer once its batch has run. */
  submit(input: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0 || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.waiting.splice(0, this.maxBatch);
    this.inFlight++;
    this.schedule();
    this.start(batch)
      .finally(() => {
        this.inFlight--;
        this.schedule();
      })
      .then(
        (results) => {
          for (const [i, waiting] of batch.entries()) {
            const result = results[i];
            if (result.ok) waiting.resolve(result.value);
            else waiting.reject(result.error);
          }
        },
        (error: unknown) => {
          for (const waiting of batch) waiting.reject(error);
        },
      );
  }

  /** The batch's promise, also when `run` throws before it has one. */
  private start(batch: Waiting<In, Out>[]): Promise<BatchResult<Out>[]> {
    try {
      return this.run(batch.map((waiting) => waiting.input));
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
