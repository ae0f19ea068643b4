// Untrusted archive work off the event loop (issue 19, finding 1): each task — a bundle's
// analysis, the lines around a piece of evidence — runs in a worker thread of its own
// (archive-thread.ts), at most `threads` at once; a task beyond that waits for a slot. A
// thread is started per task and terminated at its end, so nothing a hostile archive did to a
// heap outlives it. Each task is bounded three ways, from this thread, which a thread stuck in
// a loop cannot stop:
//   - busy time: the thread's event loop may be busy (running JavaScript: scanning, hashing,
//     tar reading) for at most busyBudgetMs; its eventLoopUtilization is read from here;
//   - memory: a heap of at most memoryMb (V8's resource limits; the archive's chunks are
//     streamed, so only what the scan keeps lives there);
//   - wall time: the task's deadline, plus a grace for the thread's own "did not finish" answer.
// The archive's bytes are pulled by the thread one chunk at a time, so a slow thread slows the
// object store's stream instead of filling memory.

import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import type { BundleManifest } from '@guard/contract';
import type { FromThread, ThreadTask, ToThread } from './archive-thread.ts';
import type { MemberLines } from './member-lines.ts';
import { type ArchiveFacts, Unanalysable } from './read-archive.ts';
import { enableLinearRegExp } from './rule-pattern.ts';
import type { RuleSpec } from './rule-scan.ts';

export interface ArchivePoolOptions {
  /** Tasks running at once; more wait. */
  threads: number;
  /** The most time a task's thread may spend running JavaScript. */
  busyBudgetMs: number;
  /** The most heap a task's thread may use. */
  memoryMb: number;
}

/** A busy thread is looked at this often. */
const WATCH_MS = 250;
/** Past its deadline a thread gets this long to answer "did not finish" itself. */
const DEADLINE_GRACE_MS = 5_000;
/** The deadline of a context-lines task (member-lines.ts has the same one inside). */
const LINES_DEADLINE_MS = 60_000;
const THREAD_URL = new URL('./archive-thread.ts', import.meta.url);

export class ArchivePool {
  readonly #options: ArchivePoolOptions;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(options: ArchivePoolOptions) {
    // The threads' analyzer rules run on V8's linear-time engine: a process-wide flag, set before a thread starts.
    enableLinearRegExp();
    this.#options = options;
  }

  /** Tasks running now and waiting for a slot. */
  get load(): { running: number; waiting: number } {
    return { running: this.#running, waiting: this.#waiting.length };
  }

  /** readArchive, in a thread of the pool. */
  readArchive(
    body: Readable,
    manifest: BundleManifest,
    options: { deadlineMs: number; signal?: AbortSignal; rules?: readonly RuleSpec[] },
  ): Promise<ArchiveFacts> {
    const task: ThreadTask = {
      kind: 'facts',
      manifest,
      deadlineMs: options.deadlineMs,
      rules: [...(options.rules ?? [])],
    };
    return this.#run(task, body, options.deadlineMs, options.signal) as Promise<ArchiveFacts>;
  }

  /** memberLines, in a thread of the pool. */
  memberLines(body: Readable, member: string, from: number, to: number): Promise<MemberLines | undefined> {
    const task: ThreadTask = { kind: 'lines', member, from, to };
    return this.#run(task, body, LINES_DEADLINE_MS) as Promise<MemberLines | undefined>;
  }

  async #run(task: ThreadTask, body: Readable, deadlineMs: number, signal?: AbortSignal): Promise<unknown> {
    try {
      await this.#slot(signal);
    } catch (error) {
      body.destroy();
      throw error;
    }
    try {
      return await this.#inThread(task, body, deadlineMs, signal);
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  #slot(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if (this.#running < this.#options.threads) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const take = () => {
        signal?.removeEventListener('abort', leave);
        this.#running++;
        resolve();
      };
      const leave = () => {
        const at = this.#waiting.indexOf(take);
        if (at !== -1) this.#waiting.splice(at, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', leave, { once: true });
      this.#waiting.push(take);
    });
  }

  #inThread(task: ThreadTask, body: Readable, deadlineMs: number, signal: AbortSignal | undefined): Promise<unknown> {
    const { busyBudgetMs, memoryMb } = this.#options;
    return new Promise((resolve, reject) => {
      const worker = new Worker(THREAD_URL, {
        workerData: task,
        resourceLimits: { maxOldGenerationSizeMb: memoryMb },
      });
      const chunks = body[Symbol.asyncIterator]();
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearInterval(watch);
        clearTimeout(deadline);
        signal?.removeEventListener('abort', onAbort);
        body.destroy();
        void worker.terminate();
        outcome();
      };
      const send = (m: ToThread, transfer?: ArrayBuffer[]) => {
        if (!settled) worker.postMessage(m, transfer);
      };
      const pull = async () => {
        try {
          const next = await chunks.next();
          if (next.done) send({ type: 'end' });
          else {
            const bytes = new Uint8Array(next.value as Buffer); // a copy the thread can own
            send({ type: 'chunk', bytes }, [bytes.buffer]);
          }
        } catch (error) {
          send({ type: 'error', message: error instanceof Error ? error.message : String(error) });
        }
      };
      worker.on('message', (m: FromThread) => {
        if (m.type === 'pull') void pull();
        else if (m.type === 'result') settle(() => resolve(m.value));
        else if (m.type === 'unanalysable') settle(() => reject(new Unanalysable(m.message, m.member)));
        else settle(() => reject(new Error(m.message)));
      });
      worker.on('error', (error: NodeJS.ErrnoException) =>
        settle(() =>
          reject(
            error.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? new Unanalysable(`the analysis needed more than the ${memoryMb} MiB of memory it may use`)
              : error,
          ),
        ),
      );
      worker.on('exit', (code) => settle(() => reject(new Error(`the analysis thread exited (code ${code})`))));
      const watch = setInterval(() => {
        if (worker.performance.eventLoopUtilization().active > busyBudgetMs)
          settle(() => reject(new Unanalysable(`the analysis used more than ${busyBudgetMs / 1000} s of CPU`)));
      }, WATCH_MS);
      const deadline = setTimeout(
        () =>
          settle(() =>
            reject(new Unanalysable(`the analysis did not finish within ${Math.round(deadlineMs / 1000)} s`)),
          ),
        deadlineMs + DEADLINE_GRACE_MS,
      );
      const onAbort = () => settle(() => reject(signal?.reason));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
