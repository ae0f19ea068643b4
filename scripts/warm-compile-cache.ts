// `npm install` runs this (postinstall): fills the compile caches that bin/guard-agent and
// bin/guard-server use (node_modules/.cache/guard-<name>, see the launchers), so that even the
// first upload on a host, or the first start of the server, loads its modules stripped and
// compiled instead of loading Node's TypeScript stripper (~18–27 MiB of RSS). Like compiling
// Python's .pyc files at install time: an optimisation only. Any failure is reported and
// ignored, and `npm install` succeeds regardless.

import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DAEMON_V8_FLAGS } from '../packages/agent/src/compilers.ts';
import { launcherFlags } from './launcher-flags.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Every module of a package's src/ except tests and main.ts (importing main runs the CLI). */
function modules(pkg: string): string[] {
  const src = join(ROOT, 'packages', pkg, 'src');
  return readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'main.ts')
    .map((f) => pathToFileURL(join(src, f)).href);
}

/** `flagSets`: the V8 flags the launcher adds for some commands (the agent's daemon: compilers.ts). */
const PROGRAMS = [
  { name: 'agent', bin: 'packages/agent/bin/guard-agent', entry: ['--version'], flagSets: [[], DAEMON_V8_FLAGS] },
  { name: 'server', bin: 'packages/server/bin/guard-server', entry: ['--help'], flagSets: [[]] },
];

for (const { name, bin, entry, flagSets } of PROGRAMS) {
  const cache = join(ROOT, 'node_modules', '.cache', `guard-${name}`);
  try {
    mkdirSync(cache, { recursive: true });
    const env = { ...process.env, NODE_COMPILE_CACHE: cache };
    // Compiled under the launcher's V8 flags: V8 rejects a cache made under others (a flag that
    // changes the compilers, such as --no-turbofan, changes the cache's flag hash).
    const load = `for (const m of ${JSON.stringify(modules(name))}) await import(m);`;
    // Node keeps one set of compiled modules per set of V8 flags, side by side.
    const runs = [
      ...flagSets.map((extra) =>
        spawnSync(process.execPath, [...launcherFlags(bin), ...extra, '--input-type=module', '-e', load], {
          env,
          stdio: 'pipe',
          timeout: 120_000,
        }),
      ),
      spawnSync(join(ROOT, bin), entry, { env, stdio: 'pipe', timeout: 120_000 }),
    ];
    const failed = runs.find((r) => r.status !== 0);
    if (failed) throw new Error(failed.error?.message ?? failed.stderr.toString().trim().split('\n').at(-1));
    console.log(`guard-${name}: compile cache ready in ${cache}`);
  } catch (error) {
    console.warn(`guard-${name}: compile cache not prepared (${(error as Error).message}); it fills on first use`);
  }
}
