// Output rules of spec 4.1 (DESIGN §3 contract — collect output):
//  - a file or symlink already at the target is refused before anything is touched;
//  - missing parent directories are created with mode 0750 (output-dir.ts);
//  - the bundle is written inside a private work directory beside the target and published
//    with link(), which never overwrites: an abort at any moment leaves no file at the
//    target, and of two concurrent collects to one path exactly one wins.
// A SIGKILL can leave a work directory behind; the next collect into the same directory
// removes the ones whose process is gone (no signal handlers are installed, spec 1.7;
// ../work-dirs.ts).

import { link, lstat, mkdtemp, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { AgentError, describeSystemError } from '../errors.ts';
import { sweepAbandonedWorkDirs, WORK_DIR_PREFIX } from '../work-dirs.ts';

export const BUNDLE_FILE_MODE = 0o600;

export function defaultBundlePath(stateDir: string, now: Date): string {
  return join(stateDir, 'support', `${Math.floor(now.getTime() / 1000)}.tar.zst`);
}

/** Fails with output_exists when anything (a dangling symlink too) is at `target`. */
export async function refuseExisting(target: string): Promise<void> {
  try {
    await lstat(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') throw new AgentError('output_dir', `cannot create ${target}: a parent is not a directory`);
    throw new AgentError('output_dir', `cannot check ${target}: ${describeSystemError(error)}`);
  }
  throw new AgentError('output_exists', `refusing to overwrite ${target}: a file already exists there`);
}

/** Creates this run's private work directory beside the target, after sweeping dead ones. */
export async function createWorkDir(targetDir: string): Promise<string> {
  await sweepAbandonedWorkDirs(targetDir);
  try {
    return await mkdtemp(join(targetDir, `${WORK_DIR_PREFIX}${process.pid}-`));
  } catch (error) {
    throw new AgentError('output_dir', `cannot write in ${targetDir}: ${describeSystemError(error)}`);
  }
}

/** Publishes the finished temp file at `target`; link() fails rather than overwrite. */
export async function publish(tempFile: string, target: string): Promise<void> {
  try {
    await link(tempFile, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new AgentError('output_exists', `refusing to overwrite ${target}: a file appeared there during collect`);
    throw new AgentError('output_dir', `cannot create ${target}: ${describeSystemError(error)}`);
  }
}

export async function removeWorkDir(workDir: string): Promise<void> {
  await rm(workDir, { recursive: true, force: true });
}

export function tempBundleName(target: string): string {
  return `${basename(target)}.partial`;
}
