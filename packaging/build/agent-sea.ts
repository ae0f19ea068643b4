// `npm run build:agent`: guard-agent as one executable, dist/guard-agent-linux-x64, that runs
// on a host with no Node.js and no npm (Node's single executable applications):
//   1. esbuild bundles packaging/agent/sea-entry.ts (main.ts and everything it imports,
//      commander, yaml, tar-stream, typebox) into one CommonJS script;
//   2. `node --experimental-sea-config` turns it into a blob, with V8's code cache;
//   3. the pinned Node 24 binary is copied, stripped of its debug symbols (126 -> 108 MB;
//      nothing the runtime reads), and the blob injected with postject.
// The launcher's V8 flags (bin/guard-agent: a 32 MiB old generation, a 1 MiB semi-space)
// travel in the blob as execArgv; NODE_OPTIONS of the host is not read
// (execArgvExtension "none"), so a host-wide NODE_OPTIONS meant for another program cannot
// change the agent.

import { execFileSync } from 'node:child_process';
import { chmod, copyFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { launcherFlags } from '../../scripts/launcher-flags.ts';
import { buildOnce, sourceHash } from './cache.ts';
import { DIST, NODE_BIN, nodeVersion, PACKAGING, ROOT } from './paths.ts';

export const AGENT_SEA = join(DIST, 'guard-agent-linux-x64');
/** The launcher's flags (packages/agent/bin/guard-agent), the same for the executable. */
export const AGENT_V8_FLAGS = launcherFlags('packages/agent/bin/guard-agent');
/** Postject's marker for Node's SEA fuse (documented in Node's single-executable-applications page). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

const INPUTS = [
  'packages/agent/bin/guard-agent',
  'packages/agent/src',
  'packages/agent/package.json',
  'packages/contract/src',
  'packages/contract/package.json',
  'package-lock.json',
  'packaging/agent/sea-entry.ts',
  'packaging/build/agent-sea.ts',
];

export async function bundleAgent(outfile: string): Promise<void> {
  await build({
    entryPoints: [join(PACKAGING, 'agent', 'sea-entry.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    // main.ts's `import.meta.main` guard is empty in CommonJS: the entry calls main() itself.
    logOverride: { 'empty-import-meta': 'silent' },
    logLevel: 'warning',
    legalComments: 'none',
  });
}

async function buildSea(): Promise<void> {
  const work = join(DIST, '.build', 'agent-sea');
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const script = join(work, 'guard-agent.cjs');
  await bundleAgent(script);
  const config = {
    main: script,
    output: join(work, 'guard-agent.blob'),
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
    execArgv: AGENT_V8_FLAGS,
    execArgvExtension: 'none',
  };
  await writeFile(join(work, 'sea-config.json'), JSON.stringify(config, null, 2));
  // The code cache is made under the same V8 flags the executable runs with, so V8 accepts it.
  execFileSync(NODE_BIN, [...AGENT_V8_FLAGS, '--experimental-sea-config', join(work, 'sea-config.json')], {
    stdio: 'pipe',
  });
  const exe = join(work, 'guard-agent');
  await copyFile(NODE_BIN, exe);
  await chmod(exe, 0o755);
  execFileSync('strip', ['--strip-all', exe], { stdio: 'pipe' });
  execFileSync(
    join(ROOT, 'node_modules', '.bin', 'postject'),
    [exe, 'NODE_SEA_BLOB', config.output, '--sentinel-fuse', SEA_FUSE],
    { stdio: 'pipe' },
  );
  const version = execFileSync(exe, ['--version'], { encoding: 'utf8', env: {} }).trim();
  if (!/^\d+\.\d+\.\d+/.test(version)) throw new Error(`the built executable printed ${JSON.stringify(version)}`);
  await mkdir(DIST, { recursive: true });
  // rename, never overwrite in place: a test may be running the previous executable.
  await rename(exe, AGENT_SEA);
  await rm(work, { recursive: true, force: true });
}

/** Builds dist/guard-agent-linux-x64 unless it is fresh; returns its path. */
export async function ensureAgentSea(force = false): Promise<string> {
  await buildOnce('agent-sea', sourceHash(INPUTS, [nodeVersion()]), [AGENT_SEA], buildSea, force);
  return AGENT_SEA;
}

if (import.meta.main) {
  const t0 = Date.now();
  const path = await ensureAgentSea(process.argv.includes('--force'));
  console.log(`${path} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}
