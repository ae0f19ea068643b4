// @guard/listen as developers run it (`npx ./guard-listen-<v>.tgz listen …`; issue 21, item 6).
//
// Shipped as one JavaScript file, not as TypeScript: Node strips types only outside
// node_modules (a .ts file in an installed package fails with
// ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING), and npx installs the package into one. esbuild
// bundles src/bin.ts with everything it imports (commander, the SDK's `sign`, the contract's
// event types) into dist/guard.cjs for Node 20 and later: the tarball has no dependency to
// fetch, so it installs offline too (a self-hosted Guard's developers may have no registry).
// CommonJS because commander is: bundled into an ES module its require() of Node's built-ins
// would fail at run time.
//
//   node packaging/build/listen-package.ts --bundle   write packages/listen/dist/guard.cjs (the package's prepack)
//   node packaging/build/listen-package.ts            pack dist/guard-listen-<v>.tgz (npm pack; prepack bundles)

import { execFileSync } from 'node:child_process';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { buildOnce, sourceHash } from './cache.ts';
import { DIST, ROOT, releaseVersion } from './paths.ts';

export const LISTEN_PACKAGE = join(ROOT, 'packages', 'listen');
export const LISTEN_BUNDLE = join(LISTEN_PACKAGE, 'dist', 'guard.cjs');
/** The oldest Node the bundle runs on (the package's engines say the same). */
export const LISTEN_NODE_TARGET = 'node20';

export function listenTarball(version = releaseVersion()): string {
  return join(DIST, `guard-listen-${version}.tgz`);
}

/** Bundles the CLI into packages/listen/dist/guard.cjs, executable, with its shebang. */
export async function bundleListen(outfile = LISTEN_BUNDLE): Promise<void> {
  await mkdir(join(outfile, '..'), { recursive: true });
  await build({
    entryPoints: [join(LISTEN_PACKAGE, 'src', 'bin.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: LISTEN_NODE_TARGET,
    format: 'cjs',
    banner: { js: '#!/usr/bin/env node' },
    logLevel: 'warning',
    legalComments: 'none',
  });
  await chmod(outfile, 0o755);
}

const INPUTS = [
  'packages/listen/src',
  'packages/listen/package.json',
  'packages/listen/README.md',
  'packages/webhooks/src',
  'packages/contract/src/endpoint-rules.ts',
  'packaging/build/listen-package.ts',
];

/** Packs the CLI unless fresh (npm pack runs the package's prepack, which bundles it); returns the tarball's path. */
export async function ensureListenPackage(force = false): Promise<string> {
  const out = listenTarball();
  await buildOnce(
    'listen-package',
    sourceHash(INPUTS, [releaseVersion()]),
    [out],
    async () => {
      await mkdir(DIST, { recursive: true });
      execFileSync('npm', ['pack', '--silent', '--pack-destination', DIST], {
        cwd: LISTEN_PACKAGE,
        stdio: 'pipe',
        // npm runs prepack with node_modules/.bin first on PATH: the pinned Node 24, which runs this file.
        env: { ...process.env, npm_config_loglevel: 'error' },
      });
    },
    force,
  );
  return out;
}

if (import.meta.main) {
  if (process.argv.includes('--bundle')) await bundleListen();
  else console.log(await ensureListenPackage(process.argv.includes('--force')));
}
