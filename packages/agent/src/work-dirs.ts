// The private work directories collect writes a bundle in (bundle/output.ts), named
// `.guard-collect-<pid>-<random>` beside the bundle. A run that is killed (SIGKILL, or the
// daemon stopping a collect it started) leaves its directory behind; sweeping removes those
// whose process is gone. Shared here so the daemon can sweep without loading the bundle code.

import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

export const WORK_DIR_PREFIX = '.guard-collect-';
const WORK_DIR_NAME = /^\.guard-collect-(\d+)-/;

/** Removes the work directories in `dir` whose process is gone; returns how many. */
export async function sweepAbandonedWorkDirs(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = WORK_DIR_NAME.exec(name);
    if (!m || isAlive(Number(m[1]))) continue;
    await rm(join(dir, name), { recursive: true, force: true }).then(
      () => removed++,
      () => {},
    );
  }
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
