// One serving guard-server per data directory. A second one would sweep the first one's
// uploads in progress (objects/.partial) and release its delivery leases at start, so `serve`
// takes this lock before it touches either: a pid file created exclusively, replaced only when
// the process it names is gone (a crash leaves a stale one). `setup` takes no lock: it only
// adds rows, through SQLite's own locking, and runs beside a serving server.

import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';

export const LOCK_FILE = 'guard-server.pid';

/** The data directory is served by another live process. */
export class DataDirBusyError extends Error {
  readonly pid: number;
  constructor(dataDir: string, pid: number) {
    super(
      `the data directory ${dataDir} is in use by another guard-server (pid ${pid}); stop it first, or give this one another --data-dir`,
    );
    this.name = 'DataDirBusyError';
    this.pid = pid;
  }
}

export interface DataDirLock {
  release(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // exists, another user's
  }
}

export async function lockDataDir(dataDir: string, pid = process.pid): Promise<DataDirLock> {
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      const file = await open(path, 'wx', 0o600);
      await file.writeFile(`${pid}\n`);
      await file.close();
      return {
        async release() {
          const held = await readFile(path, 'utf8').catch(() => '');
          if (held.trim() === String(pid)) await unlink(path).catch(() => {});
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
    }
    const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    // The same process may reopen its own data dir (tests start servers in-process).
    if (Number.isSafeInteger(holder) && holder > 0 && holder !== pid && alive(holder))
      throw new DataDirBusyError(dataDir, holder);
    await unlink(path).catch(() => {}); // stale: its process is gone
  }
}
