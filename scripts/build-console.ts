// Builds the web console (packages/console → packages/console/dist, which guard-server serves
// at /console/) when its sources changed since the last build. `npm install` runs it
// (postinstall), `npm start` runs it before the server, and the browser tests before their
// first page. "Changed" is a SHA-256 over the console's source files, kept in dist/.source-hash:
// a checkout or a pull that touches the console rebuilds it; anything else costs ~50 ms.
//
//   node scripts/build-console.ts           build if stale; a failure is reported, exit 0
//   node scripts/build-console.ts --strict  the same, but a failure exits 1
//   node scripts/build-console.ts --force   build even when current

import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CONSOLE_DIR = join(ROOT, 'packages', 'console');
export const CONSOLE_DIST = join(CONSOLE_DIR, 'dist');
const HASH_FILE = join(CONSOLE_DIST, '.source-hash');
const LOCK_DIR = join(CONSOLE_DIR, '.build-lock');
const INPUTS = ['index.html', 'vite.config.ts', 'package.json', 'tsconfig.json', 'public', 'src'];

async function files(path: string): Promise<string[]> {
  const s = await stat(path).catch(() => undefined);
  if (!s) return [];
  if (!s.isDirectory()) return [path];
  const entries = await readdir(path);
  return (await Promise.all(entries.sort().map((e) => files(join(path, e))))).flat();
}

/** SHA-256 over the names and bytes of every file the build reads. */
export async function consoleSourceHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const input of INPUTS)
    for (const file of await files(join(CONSOLE_DIR, input))) {
      hash.update(relative(CONSOLE_DIR, file)).update('\0');
      hash.update(await readFile(file)).update('\0');
    }
  return hash.digest('hex');
}

export async function consoleIsCurrent(): Promise<boolean> {
  const [want, have] = await Promise.all([consoleSourceHash(), readFile(HASH_FILE, 'utf8').catch(() => '')]);
  return want === have.trim() && (await stat(join(CONSOLE_DIST, 'index.html')).catch(() => undefined)) !== undefined;
}

/** Runs Vite's production build and records the source hash it was built from. */
export async function buildConsole(): Promise<void> {
  const hash = await consoleSourceHash();
  const { build } = await import('vite');
  await build({ root: CONSOLE_DIR, configFile: join(CONSOLE_DIR, 'vite.config.ts'), logLevel: 'warn' });
  await writeFile(HASH_FILE, `${hash}\n`);
}

/**
 * Builds when stale; concurrent callers (parallel test files) wait for one build. A lock
 * older than five minutes is a crashed build's and is taken over.
 */
export async function ensureConsoleBuilt(): Promise<'current' | 'built'> {
  if (await consoleIsCurrent()) return 'current';
  for (;;) {
    try {
      await mkdir(LOCK_DIR);
      break;
    } catch {
      const lock = await stat(LOCK_DIR).catch(() => undefined);
      if (lock && Date.now() - lock.mtimeMs > 5 * 60_000) await rm(LOCK_DIR, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 200));
      if (await consoleIsCurrent()) return 'current';
    }
  }
  try {
    if (await consoleIsCurrent()) return 'current';
    await buildConsole();
    return 'built';
  } finally {
    await rm(LOCK_DIR, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const strict = process.argv.includes('--strict');
  const started = Date.now();
  try {
    if (process.argv.includes('--force')) await buildConsole();
    else if ((await ensureConsoleBuilt()) === 'current') process.exit(0);
    console.log(`console: built packages/console/dist in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    console.error(`console: build failed: ${(error as Error).message}`);
    console.error('console: guard-server runs without it; build it with `npm run build:console`.');
    if (strict) process.exit(1);
  }
}
