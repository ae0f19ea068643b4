// Directories the agent creates for what it writes (a bundle's directory, state_dir for the
// enrolment): like mkdir -p, and each directory it creates gets mode 0750 (DESIGN §3 contract —
// collect output), whatever the umask. Directories that exist are left as they are; a symlink
// to a directory is one (it is the operator's configuration).

import { chmod, lstat, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AgentError, describeSystemError } from './errors.ts';

export const OUTPUT_DIR_MODE = 0o750;

/** mkdir -p where each directory this call creates gets exactly OUTPUT_DIR_MODE (umask aside). */
export async function ensureOutputDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    try {
      const s = await lstat(d);
      if (!s.isDirectory() && !(s.isSymbolicLink() && (await isDirectoryFollowing(d))))
        throw new AgentError('output_dir', `cannot create output directory ${dir}: ${d} is not a directory`);
      break;
    } catch (error) {
      if (error instanceof AgentError) throw error;
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || d === dirname(d))
        throw new AgentError('output_dir', `cannot create output directory ${dir}: ${describeSystemError(error)}`);
      missing.unshift(d);
    }
  }
  for (const d of missing) {
    try {
      await mkdir(d, { mode: OUTPUT_DIR_MODE });
      await chmod(d, OUTPUT_DIR_MODE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue; // a concurrent collect made it
      throw new AgentError('output_dir', `cannot create output directory ${d}: ${describeSystemError(error)}`);
    }
  }
}

async function isDirectoryFollowing(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
