// Follows a syslog file as `tail -F` does, from a persisted position, through logrotate:
//   rename (the default `create` rule): the path gets a new inode; what was left of the old file is
//     read to its end (through the descriptor still open, or at start from `<path>.1` when that
//     is the old inode), then the new file from its start;
//   copytruncate: the same inode shrinks below the position: the file is read again from 0.
// Only lines after the first start count: with no position the file is read from its end.
// A read hands the caller the complete lines that hold one of the hints (a byte search: most
// lines of a busy log are never decoded) and the position after them; the caller keeps both
// together (store.ts), so a restart resumes exactly there. Change is noticed through inotify
// (fs.watch on the directory) and, as a fallback, a poll every POLL_MS.

import { type FSWatcher, watch } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

export interface FollowPosition {
  ino: number;
  offset: number;
}

/** 256 KiB a read: 40 reads a second keep up with 10 MiB/s of log, in a quarter of 1 MiB's memory. */
export const CHUNK_BYTES = 256 * 1024;
/** A line longer than this is cut (its rest skipped); nothing legitimate in an auth log is. */
export const MAX_LINE_BYTES = 64 * 1024;
export const POLL_MS = 1000;

export interface FollowerOptions {
  path: string;
  /** Where the previous run stopped, from the store; undefined: start at the end. */
  from: FollowPosition | undefined;
  /** Byte strings a line must contain to be handed over. */
  hints: readonly string[];
  /** Complete matching lines of one read and the position after the whole read; awaited before the next read. */
  onLines: (lines: string[], position: FollowPosition) => Promise<void> | void;
  /** The file cannot be read (why); the follower keeps trying. */
  onProblem: (message: string | undefined) => void;
  signal: AbortSignal;
  pollMs?: number;
}

/** Splits complete lines out of a buffer; returns the hinted lines and how many bytes were consumed. */
export function takeLines(buf: Buffer, hints: readonly Buffer[]): { lines: string[]; consumed: number } {
  const lastNl = buf.lastIndexOf(10);
  let end = lastNl + 1;
  // A full buffer without a newline is one over-long line: cut, consumed whole.
  if (lastNl < 0) {
    if (buf.length < MAX_LINE_BYTES) return { lines: [], consumed: 0 };
    end = buf.length;
  }
  const starts = new Set<number>();
  for (const hint of hints) {
    let at = buf.indexOf(hint, 0);
    while (at >= 0 && at < end) {
      const start = buf.lastIndexOf(10, at) + 1;
      starts.add(start);
      const nl = buf.indexOf(10, at);
      if (nl < 0) break;
      at = buf.indexOf(hint, nl + 1);
    }
  }
  const lines = [...starts]
    .sort((a, b) => a - b)
    .map((start) => {
      let stop = buf.indexOf(10, start);
      if (stop < 0 || stop > end) stop = end;
      return buf.toString('utf8', start, Math.min(stop, start + MAX_LINE_BYTES)).replace(/\r$/, '');
    });
  return { lines, consumed: end };
}

export async function followLog(options: FollowerOptions): Promise<void> {
  const { path, signal } = options;
  const hints = options.hints.map((h) => Buffer.from(h));
  const pollMs = options.pollMs ?? POLL_MS;
  let file: FileHandle | undefined;
  let position: FollowPosition | undefined = options.from;
  let wake: () => void = () => {};
  let dirty = true;
  let watcher: FSWatcher | undefined;
  const kick = () => {
    dirty = true;
    wake();
  };
  const watchDir = () => {
    if (watcher) return;
    try {
      watcher = watch(dirname(path), { persistent: false }, (_event, name) => {
        if (name === null || name === basename(path) || String(name).startsWith(`${basename(path)}.`)) kick();
      });
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      watcher = undefined; // the directory is not there yet: the poll finds it
    }
  };
  signal.addEventListener('abort', () => wake(), { once: true });
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let carryProblem: string | undefined;
  const problem = (message: string | undefined) => {
    if (message === carryProblem) return;
    carryProblem = message;
    options.onProblem(message);
  };

  /** Reads `handle` from position.offset to its end, handing over lines. */
  const drain = async (handle: FileHandle, ino: number) => {
    for (;;) {
      if (signal.aborted) return;
      const offset = position?.ino === ino ? position.offset : 0;
      const { bytesRead } = await handle.read(buf, 0, buf.length, offset);
      if (bytesRead === 0) return;
      const { lines, consumed } = takeLines(buf.subarray(0, bytesRead), hints);
      if (consumed === 0) return; // a partial last line: wait for its end
      position = { ino, offset: offset + consumed };
      await options.onLines(lines, position);
      if (bytesRead < buf.length && consumed === bytesRead) return;
    }
  };

  try {
    while (!signal.aborted) {
      watchDir();
      if (dirty) {
        dirty = false;
        try {
          const current = await stat(path);
          if (!current.isFile()) throw new Error(`${path} is not a regular file`);
          if (!file || (await file.stat()).ino !== current.ino) {
            // Rotated by rename: finish the old file first (what was written before the rename).
            if (file) {
              const old = await file.stat();
              await drain(file, old.ino);
              await file.close();
              file = undefined;
            } else if (position && position.ino !== current.ino) {
              await drainRotated(`${path}.1`, position, drain);
            }
            file = await open(path, 'r');
            const ino = (await file.stat()).ino;
            if (!position) position = { ino, offset: current.size };
            else if (position.ino !== ino) position = { ino, offset: 0 };
            await options.onLines([], position);
          }
          const size = (await file.stat()).size;
          if (position && size < position.offset) {
            // copytruncate: the same file, emptied: everything in it now is new.
            position = { ino: position.ino, offset: 0 };
            await options.onLines([], position);
          }
          await drain(file, position?.ino ?? 0);
          problem(undefined);
        } catch (error) {
          const e = error as NodeJS.ErrnoException;
          problem(
            e.code === 'ENOENT'
              ? `${path} does not exist (yet)`
              : e.code === 'EACCES'
                ? `${path} cannot be read: permission denied`
                : `${path}: ${e.message}`,
          );
          if (file && e.code === 'ENOENT') {
            // Removed: what was left in it is still read through the open descriptor.
            await drain(file, (await file.stat()).ino).catch(() => {});
            await file.close().catch(() => {});
            file = undefined;
          }
        }
      }
      if (signal.aborted) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          dirty = true;
          resolve();
        }, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (dirty || signal.aborted) wake();
      });
    }
  } finally {
    watcher?.close();
    await file?.close().catch(() => {});
  }
}

/** At a start after a rotation: the rest of the old inode, when it is `<path>.1` (not compressed yet). */
async function drainRotated(
  rotated: string,
  position: FollowPosition,
  drain: (handle: FileHandle, ino: number) => Promise<void>,
): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(rotated, 'r');
    const s = await handle.stat();
    if (s.ino === position.ino && s.isFile()) await drain(handle, s.ino);
  } catch {
    // not there, or compressed already: those lines are beyond reach
  } finally {
    await handle?.close();
  }
}
