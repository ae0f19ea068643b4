// @guard/webhooks as the npm package customers install (issue 13): packages/webhooks/src
// compiled by tsc twice — ES modules into dist/esm, CommonJS into dist/cjs (the same sources
// in a directory whose package.json says "commonjs") — each with its .d.ts; `exports` sends
// `import` and `require` (and their `types`) to the matching build. The manifest written here
// is the published one; packages/webhooks/package.json stays the workspace's (its exports
// point at the TypeScript sources, which the server and the tests import directly).
// `npm pack` then writes dist/guard-webhooks-<version>.tgz.

import { execFileSync, spawnSync } from 'node:child_process';
import { copyFile, cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { buildOnce, sourceHash } from './cache.ts';
import { DIST, ROOT, releaseVersion } from './paths.ts';

const PKG = join(ROOT, 'packages', 'webhooks');
export const WEBHOOKS_STAGE = join(DIST, 'npm', 'webhooks');
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');

export function webhooksTarball(version = releaseVersion()): string {
  return join(DIST, `guard-webhooks-${version}.tgz`);
}

const ENTRY = (name: string) => ({
  import: { types: `./dist/esm/${name}.d.ts`, default: `./dist/esm/${name}.js` },
  require: { types: `./dist/cjs/${name}.d.ts`, default: `./dist/cjs/${name}.js` },
});

/** The published package.json: the workspace manifest's identity, the built entry points. */
export async function publishManifest(): Promise<Record<string, unknown>> {
  const dev = JSON.parse(await readFile(join(PKG, 'package.json'), 'utf8'));
  return {
    name: dev.name,
    version: releaseVersion(),
    description: dev.description,
    license: dev.license,
    keywords: dev.keywords,
    type: 'module',
    exports: { '.': ENTRY('index'), './web': ENTRY('web'), './package.json': './package.json' },
    // For TypeScript's old `node10` resolution, which reads no `exports`.
    main: './dist/cjs/index.js',
    types: './dist/cjs/index.d.ts',
    typesVersions: { '*': { web: ['./dist/cjs/web.d.ts'] } },
    files: ['dist', 'README.md', 'LICENSE'],
    sideEffects: false,
    engines: dev.engines,
  };
}

/** `from './x.ts'` → `from './x.js'` in declarations (tsc rewrites the JavaScript, not the .d.ts). */
async function rewriteDeclarations(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.d.ts')) continue;
    const path = join(dir, name);
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace(/(from\s+['"]\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1.js$2'));
  }
}

async function compile(format: 'esm' | 'cjs', work: string): Promise<void> {
  const src = join(work, `${format}-src`);
  await cp(join(PKG, 'src'), src, { recursive: true, filter: (p) => !p.endsWith('.test.ts') });
  await writeFile(join(src, 'package.json'), JSON.stringify({ type: format === 'esm' ? 'module' : 'commonjs' }));
  const out = join(WEBHOOKS_STAGE, 'dist', format);
  // lib: ES2022 plus DOM for the WebCrypto and TextEncoder globals; types: node for node:crypto.
  // (Not verbatimModuleSyntax, which the workspace uses: it forbids import syntax in CommonJS output.)
  const tsc = spawnSync(
    TSC,
    [
      '--ignoreConfig',
      '--rootDir',
      src,
      '--outDir',
      out,
      '--declaration',
      '--rewriteRelativeImportExtensions',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--lib',
      'es2022,dom',
      '--types',
      'node',
      '--typeRoots',
      join(ROOT, 'node_modules', '@types'),
      '--strict',
      '--skipLibCheck',
      '--erasableSyntaxOnly',
      '--removeComments',
      'false',
      join(src, 'index.ts'),
      join(src, 'web.ts'),
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (tsc.status !== 0) throw new Error(`tsc (${format}) failed:\n${tsc.stdout}${tsc.stderr}`);
  await writeFile(join(out, 'package.json'), `${JSON.stringify({ type: format === 'esm' ? 'module' : 'commonjs' })}\n`);
  await rewriteDeclarations(out);
}

async function buildPackage(): Promise<void> {
  const work = join(DIST, '.build', 'webhooks');
  await rm(work, { recursive: true, force: true });
  await rm(WEBHOOKS_STAGE, { recursive: true, force: true });
  await mkdir(WEBHOOKS_STAGE, { recursive: true });
  await compile('esm', work);
  await compile('cjs', work);
  await writeFile(join(WEBHOOKS_STAGE, 'package.json'), `${JSON.stringify(await publishManifest(), null, 2)}\n`);
  await copyFile(join(PKG, 'README.md'), join(WEBHOOKS_STAGE, 'README.md'));
  await copyFile(join(ROOT, 'LICENSE'), join(WEBHOOKS_STAGE, 'LICENSE'));
  execFileSync('npm', ['pack', '--silent', '--pack-destination', DIST], {
    cwd: WEBHOOKS_STAGE,
    stdio: 'pipe',
    env: { ...process.env, npm_config_loglevel: 'error' },
  });
  await rm(work, { recursive: true, force: true });
}

const INPUTS = [
  'packages/webhooks/src',
  'packages/webhooks/package.json',
  'packages/webhooks/README.md',
  'LICENSE',
  'packaging/build/webhooks-package.ts',
];

/** Builds and packs the SDK unless fresh; returns the tarball's path. */
export async function ensureWebhooksPackage(force = false): Promise<string> {
  const out = webhooksTarball();
  await buildOnce('webhooks-package', sourceHash(INPUTS, [releaseVersion()]), [out], buildPackage, force);
  return out;
}

/** Files of the built package, relative to it (for the tests' and release's listings). */
export async function packageFiles(dir = WEBHOOKS_STAGE): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(d, e.name));
      else out.push(relative(dir, join(d, e.name)));
    }
  };
  await walk(dir);
  return out.sort();
}

if (import.meta.main) {
  const path = await ensureWebhooksPackage(process.argv.includes('--force'));
  console.log(path);
}
