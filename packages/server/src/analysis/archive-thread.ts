// The body of an analysis thread (archive-pool.ts starts one per task): the untrusted work —
// zstd, the tar reader, gunzip, the log scan, hashing — runs here, off the server's event loop.
// The archive's bytes come from the pool as they are pulled (one chunk asked, one chunk sent),
// so the thread holds no more of the archive than a stream would; the answer goes back as one
// message. A task that outlives its budget is not asked to stop: the pool terminates the thread.

import { Readable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import type { BundleManifest } from '@guard/contract';
import { memberLines } from './member-lines.ts';
import { readArchive, Unanalysable } from './read-archive.ts';
import type { RuleSpec } from './rule-scan.ts';

export type ThreadTask =
  | { kind: 'facts'; manifest: BundleManifest; deadlineMs: number; rules: RuleSpec[] }
  | { kind: 'lines'; member: string; from: number; to: number };

/** What the pool sends: the archive's bytes, its end, or why it could not be read. */
export type ToThread = { type: 'chunk'; bytes: Uint8Array } | { type: 'end' } | { type: 'error'; message: string };

/** What the thread sends: a request for the next chunk, or the task's one answer. */
export type FromThread =
  | { type: 'pull' }
  | { type: 'result'; value: unknown }
  | { type: 'unanalysable'; message: string; member: string | undefined }
  | { type: 'failed'; message: string };

const CHUNK_AHEAD_BYTES = 1024 * 1024;

function run(port: NonNullable<typeof parentPort>, task: ThreadTask): void {
  const body = new Readable({
    highWaterMark: CHUNK_AHEAD_BYTES,
    read: () => port.postMessage({ type: 'pull' } satisfies FromThread),
  });
  port.on('message', (m: ToThread) => {
    if (m.type === 'chunk') body.push(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength));
    else if (m.type === 'end') body.push(null);
    else body.destroy(new Error(m.message));
  });
  const work: Promise<unknown> =
    task.kind === 'facts'
      ? readArchive(body, task.manifest, { deadlineMs: task.deadlineMs, rules: task.rules })
      : memberLines(body, task.member, task.from, task.to);
  work.then(
    (value) => port.postMessage({ type: 'result', value } satisfies FromThread),
    (error: unknown) =>
      port.postMessage(
        (error instanceof Unanalysable
          ? { type: 'unanalysable', message: error.message, member: error.member }
          : { type: 'failed', message: error instanceof Error ? error.message : String(error) }) satisfies FromThread,
      ),
  );
}

if (parentPort) run(parentPort, workerData as ThreadTask);
