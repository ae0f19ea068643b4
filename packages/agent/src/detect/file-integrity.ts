// File integrity for the watch list (DESIGN §3: files, or directories meaning the files in
// them). Each file's SHA-256 and owner are kept in the store; a scan compares the files with
// that baseline and reports what changed, appeared or disappeared, with the new baseline to
// keep in the same transaction. At start the scan finds what changed while the daemon was
// down; afterwards inotify (fs.watch on each watched file's directory) starts a scan within
// DEBOUNCE_MS of a change, and a full scan runs every RESCAN_MS in case a watch was missed
// (a directory that did not exist yet, an overflowed inotify queue).

import { createHash } from 'node:crypto';
import { constants, type FSWatcher, watch } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { FileChange } from './signals.ts';
import type { FileBaseline } from './store.ts';

export const DEBOUNCE_MS = 100;
export const RESCAN_MS = 60_000;
/** The most files a directory entry of the watch list contributes (a huge directory is a mistake). */
export const DIRECTORY_FILES_MAX = 1000;

export interface FileState {
  sha256: string;
  uid: number;
}

/** The files the watch list means now: each file entry, and the regular files in each directory entry. */
export async function expandWatchList(watchList: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  for (const entry of watchList) {
    let names: string[];
    try {
      const dirents = await readdir(entry, { withFileTypes: true });
      names = dirents
        .filter((d) => d.isFile() || d.isSymbolicLink())
        .map((d) => join(entry, d.name))
        .sort()
        .slice(0, DIRECTORY_FILES_MAX);
    } catch (error) {
      // ENOTDIR: a file entry; ENOENT: a file (or directory) that is not there now, watched for its appearance.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTDIR' && code !== 'ENOENT') throw error;
      names = [entry];
    }
    for (const name of names) out.add(name);
  }
  return [...out];
}

/** A file's hash and owner; null when there is no regular file there. */
export async function hashFile(path: string): Promise<FileState | null> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const s = await handle.stat();
    if (!s.isFile()) return null;
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(1 << 16);
    let at = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, at);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      at += bytesRead;
    }
    return { sha256: hash.digest('hex'), uid: s.uid };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  } finally {
    await handle?.close();
  }
}

export interface FileEvent {
  path: string;
  change: FileChange;
  before: string | null;
  after: string | null;
  uid: number | null;
}

/**
 * Compares the files with the baseline. A path the baseline does not know is taken into it
 * silently when `silentNew` says so (the first start, or a path just added to the watch list);
 * otherwise its appearance is an event.
 */
export async function scanFiles(
  watchList: readonly string[],
  paths: readonly string[],
  baseline: Map<string, FileBaseline>,
  silentNew: (path: string) => boolean,
  onError: (path: string, message: string) => void,
): Promise<{ events: FileEvent[]; updates: [string, FileBaseline | null][] }> {
  const events: FileEvent[] = [];
  const updates: [string, FileBaseline | null][] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    seen.add(path);
    let now: FileState | null;
    try {
      now = await hashFile(path);
    } catch (error) {
      onError(path, (error as Error).message);
      continue;
    }
    const known = baseline.get(path);
    const after = now?.sha256 ?? null;
    if (!known) {
      updates.push([path, { sha256: after, uid: now?.uid ?? null }]);
      if (after !== null && !silentNew(path))
        events.push({ path, change: 'created', before: null, after, uid: now?.uid ?? null });
      continue;
    }
    if (known.sha256 === after) continue;
    updates.push([path, { sha256: after, uid: now?.uid ?? known.uid }]);
    const change: FileChange = known.sha256 === null ? 'created' : after === null ? 'deleted' : 'modified';
    events.push({ path, change, before: known.sha256, after, uid: now?.uid ?? known.uid });
  }
  // A file that left a watched directory (no longer in the expanded list); a path that left
  // the watch list itself is forgotten silently.
  for (const [path, known] of baseline) {
    if (seen.has(path)) continue;
    updates.push([path, null]);
    if (known.sha256 !== null && watchList.includes(dirname(path)))
      events.push({ path, change: 'deleted', before: known.sha256, after: null, uid: known.uid });
  }
  return { events, updates };
}

/** inotify on the directories of the watch list; `onChange` after DEBOUNCE_MS of quiet. */
export function watchDirectories(watchList: readonly string[], onChange: () => void): () => void {
  const dirs = new Set<string>();
  for (const entry of watchList) {
    dirs.add(dirname(entry));
    dirs.add(entry); // a directory entry's own changes (a no-op watch fails for a file: ignored)
  }
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  const names = new Set(watchList.map((e) => basename(e)));
  for (const dir of dirs) {
    try {
      const isEntry = watchList.includes(dir);
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (!isEntry && name !== null && !names.has(String(name))) return;
        clearTimeout(timer);
        timer = setTimeout(onChange, DEBOUNCE_MS);
      });
      w.on('error', () => w.close());
      watchers.push(w);
    } catch {
      // not a directory, or not there: the periodic rescan covers it
    }
  }
  return () => {
    clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
