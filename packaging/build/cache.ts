// Builds are slow (a 100 MiB executable, .deb compression) and several test files need the
// same artefact, so each build is keyed by a hash of what it is made from and redone only
// when that changes. A lock directory keeps two test processes (node --test runs files in
// parallel) from building the same artefact at once: the second waits, then finds it fresh.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DIST, ROOT } from './paths.ts';

const STAMPS = join(DIST, '.stamps');
const LOCK_WAIT_MS = 15 * 60_000;

/** Files under `paths` (files or directories, relative to the root), sorted; tests and node_modules left out. */
export function inputFiles(paths: string[]): string[] {
  const out: string[] = [];
  const walk = (abs: string) => {
    const st = statSync(abs);
    if (st.isDirectory()) {
      for (const name of readdirSync(abs)) {
        if (name === 'node_modules' || name === 'dist' || name.endsWith('.test.ts')) continue;
        walk(join(abs, name));
      }
    } else if (st.isFile()) out.push(abs);
  };
  for (const p of paths) walk(join(ROOT, p));
  return out.sort();
}

/** SHA-256 over the names and bytes of the inputs, plus any extra strings (versions, options). */
export function sourceHash(paths: string[], extra: string[] = []): string {
  const hash = createHash('sha256');
  for (const file of inputFiles(paths))
    hash
      .update(`${relative(ROOT, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  for (const e of extra) hash.update(`${e}\0`);
  return hash.digest('hex');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const lock = join(STAMPS, `${name}.lock`);
  await mkdir(STAMPS, { recursive: true });
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await mkdir(lock);
      await writeFile(join(lock, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(await readFile(join(lock, 'pid'), 'utf8').catch(() => '0'));
      if (pid > 0 && !alive(pid)) {
        await rm(lock, { recursive: true, force: true }); // its builder died
        continue;
      }
      if (Date.now() > until) throw new Error(`${name}: gave up waiting for the build lock ${lock}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/**
 * Runs `build` unless every one of `outputs` exists and was built from inputs with this
 * `hash`. Returns whether it built. GUARD_REBUILD=1 forces the build.
 */
export async function buildOnce(
  name: string,
  hash: string,
  outputs: string[],
  build: () => Promise<void>,
  force = false,
): Promise<boolean> {
  const stamp = join(STAMPS, `${name}.sha256`);
  const fresh = () => existsSync(stamp) && readFileSync(stamp, 'utf8') === hash && outputs.every((o) => existsSync(o));
  if (!force && fresh()) return false;
  return withLock(name, async () => {
    if (!force && fresh()) return false; // another process built it while we waited
    await rm(stamp, { force: true });
    await build();
    await writeFile(stamp, hash);
    return true;
  });
}
