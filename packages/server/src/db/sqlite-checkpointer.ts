// WAL checkpoints of the embedded database, on a thread of their own. SQLite's automatic
// checkpoint runs inside the COMMIT that pushes the WAL past 1000 pages, on the connection's
// own thread: here the event loop, blocked while it copies the pages back and fsyncs the file
// (8–27 ms per COMMIT that checkpointed, measured under load with bench/scale.ts), and every request and delivery
// waits behind it. So the server's connection never checkpoints (wal_autocheckpoint = 0) and a
// worker thread with its own connection runs PASSIVE checkpoints every CHECKPOINT_INTERVAL_MS:
// they never block a writer, and the fsync happens off the event loop.
//
// Nor does the server's connection cut the WAL file back (journal_size_limit = -1): SQLite
// truncates it in the first COMMIT after a reset, and dropping a large WAL's pages from the
// page cache took that COMMIT 30–150 ms of kernel time after a burst of writes, the longest
// stall of the event loop beside a busy neighbour (perf; bench:peers, issue 25). The thread
// cuts it back instead, with a TRUNCATE checkpoint once the database has been quiet for
// QUIET_MS and the file is over JOURNAL_SIZE_LIMIT; a write that comes meanwhile waits for it
// (busy_timeout) at a moment when there was no work. SQLite checkpoints the WAL fully on close.
//
// Under steady writes a PASSIVE checkpoint never catches up: the server commits new frames
// while it copies and syncs, and only a write that finds the WAL copied back whole starts it
// over from its beginning. So the WAL grew for as long as the load lasted (430 MB in one
// bench:peers run of 30 s), every frame an append that the kernel had to allocate for. Once the WAL
// holds more than JOURNAL_SIZE_LIMIT of frames, the thread follows its PASSIVE checkpoint with
// a RESTART one: it holds the writer's lock while it copies the tail the PASSIVE one left and
// syncs, and waits for readers, so that the next write starts the WAL over. The file then keeps
// its size and is written over in place. It waits at most RESTART_WAIT_MS for the lock or a
// reader; writes wait for it meanwhile (busy_timeout).

import { Worker } from 'node:worker_threads';

const CHECKPOINT_INTERVAL_MS = 100;
/** No commit for this long: the WAL may be cut back. */
const QUIET_MS = 2000;
export const JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024;
/** How long a RESTART checkpoint waits for the writer's lock or a reader before it gives up until the next turn. */
const RESTART_WAIT_MS = 20;

// CommonJS: an eval'd worker is not a module.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 1000');
db.exec('PRAGMA cache_size = 8'); // a checkpoint copies WAL frames: it needs no page cache
const dataVersion = db.prepare('PRAGMA data_version');
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)');
const restartFrames = Math.floor(workerData.sizeLimit / (db.prepare('PRAGMA page_size').get().page_size + 24));
let lastVersion;
let quietSince = Date.now();
const checkpoint = () => {
  try {
    const { log } = passive.get();
    // data_version changes when another connection (the server's) has committed since.
    const version = dataVersion.get().data_version;
    if (version !== lastVersion) {
      lastVersion = version;
      quietSince = Date.now();
      if (log > restartFrames) {
        // Writes wait for this one (the tail left by the PASSIVE one, and its syncs); it waits
        // at most RESTART_WAIT_MS for them, or for a reader, and else gives up until the next turn.
        db.exec('PRAGMA busy_timeout = ' + workerData.restartWaitMs);
        try {
          restart.get();
        } finally {
          db.exec('PRAGMA busy_timeout = 1000');
        }
      }
    } else if (Date.now() - quietSince >= workerData.quietMs) {
      quietSince = Number.POSITIVE_INFINITY; // once per quiet spell
      const wal = statSync(workerData.path + '-wal', { throwIfNoEntry: false });
      if (wal && wal.size > workerData.sizeLimit) db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    }
  } catch {
    // busy: the next turn
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /**
   * Stops the thread; resolves once it has closed its connection and exited, so that the
   * server's connection closes last (checkpointing the WAL fully) and nothing holds the files.
   */
  stop(): Promise<void>;
}

/** `options` for tests: a shorter quiet spell, a smaller WAL limit. */
export function startCheckpointer(
  path: string,
  { quietMs = QUIET_MS, sizeLimit = JOURNAL_SIZE_LIMIT }: { quietMs?: number; sizeLimit?: number } = {},
): Checkpointer {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { path, intervalMs: CHECKPOINT_INTERVAL_MS, quietMs, sizeLimit, restartWaitMs: RESTART_WAIT_MS },
    // One connection and a timer; smaller heaps than this run out of memory at start. The
    // thread costs ~12 MiB of RSS (measured: idle server 111 → 123–126 MiB).
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
  });
  worker.unref();
  worker.on('error', () => {}); // a failed checkpointer leaves the WAL to grow until close, never the server down
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    stop() {
      worker.ref(); // the exit awaited keeps the process alive until it comes
      worker.postMessage('stop');
      return exited;
    },
  };
}
