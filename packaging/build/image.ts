// `npm run build:image`: the server's container image (DESIGN §8, issue 23) as
// dist/guard-server-<version>.image.tar, a docker-archive that `podman load -i` and
// `docker load -i` both take. No registry base image can be pulled here, and none is needed:
// the root file system is made of
//   1. Debian 12 packages, fetched with apt from deb.debian.org and checked against Debian's
//      archive key: libc6, libgcc-s1, libstdc++6 (what the Node binary links), gcc-12-base
//      (their copyright) and dash (/bin/sh, for the launcher and `podman exec … sh`), unpacked
//      with `dpkg-deb -x` and trimmed of documentation, manual pages, locales and iconv
//      modules; plus the users (root, guard 10001, nobody), os-release, and a dpkg status
//      entry per package under /var/lib/dpkg/status.d (as distroless images have it, so image
//      scanners know what is inside);
//   2. the pinned Node 24 runtime, stripped (its own layer: it changes with Node, not Guard);
//   3. the release's application, console, launcher and health check, exactly as the
//      server .deb carries them (server-deb.ts stageServerTree).
// Each layer is written here, not by buildah: entries sorted by name, every mtime the last
// commit's time (SOURCE_DATE_EPOCH), owners numeric, so the same inputs give the same layer
// digests and the same image id (the config's digest). What changes the id: a Debian
// security update of one of the five packages, another Node version, any change to the
// release's files, or another commit (the revision label).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, readFile, readlink, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { buildOnce, sourceHash } from './cache.ts';
import { copyright } from './copyright.ts';
import { install } from './deb.ts';
import { DIST, nodeVersion, PACKAGING, ROOT, releaseVersion } from './paths.ts';
import { SERVER_INPUTS, stageServerTree } from './server-deb.ts';

/** A Debian package whose files are in the image, as the SBOM lists it. */
export interface DebianPackage {
  name: string;
  version: string;
  architecture: string;
  /** SHA-256 of the .deb it was unpacked from. */
  sha256: string;
}

export interface ServerImage {
  /** dist/guard-server-<version>.image.tar */
  path: string;
  /** The image id: the SHA-256 of its configuration, as `podman images --no-trunc` shows it. */
  id: string;
  /** The Debian packages unpacked into its root file system. */
  debianPackages: DebianPackage[];
  /** The commit it was built from (its revision label). */
  revision: string;
}

/** Where the packages come from (Debian's own archive, checked with its key). */
const DEBIAN = {
  keyring: '/usr/share/keyrings/debian-archive-keyring.gpg',
  sources: [
    'http://deb.debian.org/debian bookworm main',
    'http://deb.debian.org/debian bookworm-updates main',
    'http://deb.debian.org/debian-security bookworm-security main',
  ],
  packages: ['libc6', 'libgcc-s1', 'libstdc++6', 'gcc-12-base', 'dash'],
};
/** The user the server runs as (numeric in the image's config, so `runAsNonRoot` can check it). */
export const IMAGE_UID = 10001;
export const DATA_VOLUME = '/var/lib/guard-server';
const SOURCE_URL = 'https://github.com/guard-project/guard';

/** What Debian's packages carry that nothing in the image reads. */
const TRIM = [
  'usr/share/man',
  'usr/share/info',
  'usr/share/locale',
  'usr/share/lintian',
  'usr/share/bug',
  'usr/share/menu',
  'usr/share/gdb',
  'usr/share/gcc',
  'usr/share/doc-base',
  'usr/lib/x86_64-linux-gnu/gconv', // iconv modules: Node converts with ICU
];

export function imagePath(version = releaseVersion()): string {
  return join(DIST, `guard-server-${version}.image.tar`);
}

export function imageTag(version = releaseVersion()): string {
  return `guard-server:${version}`;
}

const CACHE = join(ROOT, 'node_modules', '.cache', 'guard-image-apt');

function aptOptions(): string[] {
  return [
    `Dir::State::Lists=${join(CACHE, 'lists')}`,
    `Dir::Cache=${join(CACHE, 'cache')}`,
    `Dir::Etc::SourceList=${join(CACHE, 'sources.list')}`,
    'Dir::Etc::SourceParts=/dev/null',
    'Dir::State::status=/dev/null',
    'APT::Sandbox::User=root',
    'Debug::NoLocking=1',
  ].flatMap((o) => ['-o', o]);
}

/**
 * Downloads the image's Debian packages into the cache (apt with lists of its own, never the
 * host's): returns each .deb with its name, version and digest.
 */
async function fetchDebianPackages(): Promise<{ deb: string; pkg: DebianPackage }[]> {
  const debs = join(CACHE, 'debs');
  await rm(debs, { recursive: true, force: true });
  for (const d of ['lists/partial', 'cache/archives/partial', 'debs']) await mkdir(join(CACHE, d), { recursive: true });
  await writeFile(
    join(CACHE, 'sources.list'),
    DEBIAN.sources.map((s) => `deb [signed-by=${DEBIAN.keyring}] ${s}\n`).join(''),
  );
  const apt = (args: string[]) => {
    try {
      execFileSync('apt-get', [...aptOptions(), '-qq', ...args], { cwd: debs, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      const e = error as { stderr?: Buffer; message: string };
      throw new Error(
        `the image's Debian packages could not be fetched (apt-get ${args[0]}): ${e.stderr?.toString().trim() || e.message}\n` +
          'The image is built from Debian packages downloaded from deb.debian.org; this machine must reach it.',
      );
    }
  };
  apt(['update']);
  apt(['download', ...DEBIAN.packages]);
  const out: { deb: string; pkg: DebianPackage }[] = [];
  for (const name of (await readdir(debs)).sort()) {
    const deb = join(debs, name);
    const field = (f: string) => execFileSync('dpkg-deb', ['-f', deb, f], { encoding: 'utf8' }).trim();
    const hash = createHash('sha256');
    await pipeline(createReadStream(deb), hash);
    out.push({
      deb,
      pkg: {
        name: field('Package'),
        version: field('Version'),
        architecture: field('Architecture'),
        sha256: hash.digest('hex'),
      },
    });
  }
  const missing = DEBIAN.packages.filter((p) => !out.some((o) => o.pkg.name === p));
  if (missing.length) throw new Error(`apt-get download fetched no ${missing.join(', ')}`);
  return out;
}

/** The Debian layer's tree: the packages unpacked and trimmed, the users, the dpkg status entries. */
async function stageBase(tree: string, debs: { deb: string; pkg: DebianPackage }[]): Promise<void> {
  await mkdir(tree, { recursive: true });
  for (const { deb } of debs) execFileSync('dpkg-deb', ['-x', deb, tree]);
  for (const t of TRIM) await rm(join(tree, t), { recursive: true, force: true });
  // Each package's copyright stays (its licence asks for it); the rest of its docs go.
  const docs = join(tree, 'usr', 'share', 'doc');
  for (const pkg of await readdir(docs))
    for (const f of await readdir(join(docs, pkg)))
      if (f !== 'copyright') await rm(join(docs, pkg, f), { recursive: true, force: true });

  const status = join(tree, 'var', 'lib', 'dpkg', 'status.d');
  await mkdir(status, { recursive: true });
  for (const { deb, pkg } of debs) {
    const control = execFileSync('dpkg-deb', ['-f', deb], { encoding: 'utf8' }).trimEnd();
    await writeFile(
      join(status, pkg.name),
      `${control.replace(/^(Package: .*)$/m, '$1\nStatus: install ok installed')}\n`,
    );
  }
  const etc = join(tree, 'etc');
  await mkdir(etc, { recursive: true });
  await writeFile(
    join(etc, 'passwd'),
    'root:x:0:0:root:/root:/usr/sbin/nologin\n' +
      `guard:x:${IMAGE_UID}:${IMAGE_UID}:Guard service:${DATA_VOLUME}:/usr/sbin/nologin\n` +
      'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
  );
  await writeFile(join(etc, 'group'), `root:x:0:\nguard:x:${IMAGE_UID}:\nnogroup:x:65534:\n`);
  await writeFile(join(etc, 'nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');
  await writeFile(
    join(etc, 'os-release'),
    'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\n' +
      'VERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\nHOME_URL="https://www.debian.org/"\n',
  );
  for (const d of ['tmp', 'root', 'var/lib/guard-server', 'var/cache/guard-server'])
    await mkdir(join(tree, d), { recursive: true });
  await chmod(join(tree, 'tmp'), 0o1777);
  await chmod(join(tree, 'root'), 0o700);
  await chmod(join(tree, 'var/lib/guard-server'), 0o750);
  await chmod(join(tree, 'var/cache/guard-server'), 0o750);
}

/** Paths (relative, no leading slash) owned by the guard user in the image; everything else is root's. */
type EntryHeader = Parameters<ReturnType<typeof tar.pack>['entry']>[0];

const GUARD_OWNED = new Set(['var/lib/guard-server', 'var/cache/guard-server']);

interface Layer {
  /** sha256:<hex> of the uncompressed tar (the config's diff_id). */
  diffId: string;
  file: string;
  size: number;
  createdBy: string;
}

/**
 * Writes `tree` (only the paths `include` accepts) as a reproducible tar: entries in byte
 * order of their names, parent directories first, every mtime `epoch`, owners numeric.
 */
async function writeLayer(
  tree: string,
  file: string,
  epoch: number,
  createdBy: string,
  include: (rel: string) => boolean = () => true,
): Promise<Layer> {
  const pack = tar.pack();
  const mtime = new Date(epoch * 1000);
  const hash = createHash('sha256');
  let size = 0;
  const hashing = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  const written = pipeline(pack, hashing, createWriteStream(file));
  const header = (rel: string, mode: number) => {
    const uid = GUARD_OWNED.has(rel) ? IMAGE_UID : 0;
    return { name: rel, mode: mode & 0o7777, uid, gid: uid, uname: '', gname: '', mtime };
  };
  const entry = (h: EntryHeader, body?: NodeJS.ReadableStream) =>
    new Promise<void>((ok, fail) => {
      const sink = pack.entry(h, (e) => (e ? fail(e) : ok()));
      if (body) body.pipe(sink);
      else sink.end(Buffer.alloc(0));
    });
  const walk = async (rel: string): Promise<void> => {
    const names = (await readdir(join(tree, rel))).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const name of names) {
      const child = rel ? `${rel}/${name}` : name;
      const abs = join(tree, child);
      const st = await lstat(abs);
      if (st.isDirectory()) {
        if (!include(`${child}/`)) continue;
        await entry({ ...header(child, st.mode), name: `${child}/`, type: 'directory' });
        await walk(child);
      } else if (!include(child)) continue;
      else if (st.isSymbolicLink())
        await entry({ ...header(child, 0o777), type: 'symlink', linkname: await readlink(abs) });
      else if (st.isFile())
        await entry({ ...header(child, st.mode), type: 'file', size: st.size }, createReadStream(abs));
      else throw new Error(`${abs}: neither a file, a directory nor a symbolic link`);
    }
  };
  await walk('');
  pack.finalize();
  await written;
  return { diffId: `sha256:${hash.digest('hex')}`, file, size, createdBy };
}

function commitEpoch(): number {
  const fromEnv = Number(process.env.SOURCE_DATE_EPOCH);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  try {
    return Number(execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT, encoding: 'utf8' }).trim());
  } catch {
    return 0;
  }
}

export function revision(): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

const SECOND_NS = 1_000_000_000;

/** The image configuration (docker's, which keeps the health check; OCI's drops it). */
function imageConfig(version: string, epoch: number, layers: Layer[]): Record<string, unknown> {
  const created = new Date(epoch * 1000).toISOString();
  return {
    architecture: 'amd64',
    os: 'linux',
    created,
    config: {
      User: `${IMAGE_UID}:${IMAGE_UID}`,
      Env: [
        'PATH=/usr/sbin:/usr/bin:/sbin:/bin',
        'GUARD_SERVER_LISTEN=0.0.0.0:8080',
        `GUARD_SERVER_DATA_DIR=${DATA_VOLUME}`,
        'GUARD_SERVER_CONSOLE_DIR=/usr/lib/guard-server/console',
        // Reachable from the container's network (Prometheus beside it); publish it only to one you trust.
        'GUARD_SERVER_METRICS_LISTEN=0.0.0.0:9464',
        'NODE_COMPILE_CACHE=/var/cache/guard-server',
        // The start message then says how to run commands in a container (cli/serve.ts).
        `GUARD_SERVER_IMAGE=${imageTag(version)}`,
      ],
      Entrypoint: ['/usr/bin/guard-server'],
      Cmd: ['serve'],
      WorkingDir: DATA_VOLUME,
      Volumes: { [DATA_VOLUME]: {} },
      ExposedPorts: { '8080/tcp': {}, '9464/tcp': {} },
      StopSignal: 'SIGTERM',
      Healthcheck: {
        Test: ['CMD', '/usr/lib/guard-server/node', '/usr/lib/guard-server/healthcheck.mjs'],
        Interval: 30 * SECOND_NS,
        Timeout: 5 * SECOND_NS,
        StartPeriod: 30 * SECOND_NS,
        Retries: 3,
      },
      Labels: {
        'org.opencontainers.image.title': 'guard-server',
        'org.opencontainers.image.description':
          'Guard service: API, support bundles, signed webhooks, console. Embedded SQLite by default.',
        'org.opencontainers.image.version': version,
        'org.opencontainers.image.revision': revision(),
        'org.opencontainers.image.created': created,
        'org.opencontainers.image.source': SOURCE_URL,
        'org.opencontainers.image.url': SOURCE_URL,
        'org.opencontainers.image.documentation': `${SOURCE_URL}/blob/main/docs/deploy.md`,
        'org.opencontainers.image.licenses': 'Apache-2.0',
        'org.opencontainers.image.vendor': 'Guard contributors',
        'org.opencontainers.image.base.name': 'scratch (Debian 12 packages, no base image)',
      },
    },
    rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
    history: layers.map((l) => ({ created, created_by: l.createdBy })),
  };
}

/** The docker-archive: manifest.json, the config, each layer as <hex>/layer.tar. */
async function writeArchive(
  out: string,
  config: Buffer,
  layers: Layer[],
  tags: string[],
  epoch: number,
): Promise<string> {
  const configHex = createHash('sha256').update(config).digest('hex');
  const manifest = Buffer.from(
    JSON.stringify([
      { Config: `${configHex}.json`, RepoTags: tags, Layers: layers.map((l) => `${l.diffId.slice(7)}/layer.tar`) },
    ]),
  );
  const pack = tar.pack();
  const tmp = `${out}.partial`;
  const written = pipeline(pack, createWriteStream(tmp));
  const mtime = new Date(epoch * 1000);
  const add = (name: string, body: Buffer) =>
    new Promise<void>((ok, fail) => pack.entry({ name, mtime, mode: 0o644 }, body, (e) => (e ? fail(e) : ok())));
  for (const l of layers) {
    const hex = l.diffId.slice(7);
    await new Promise<void>((ok, fail) =>
      pack.entry({ name: `${hex}/`, type: 'directory', mtime, mode: 0o755 }, (e) => (e ? fail(e) : ok())),
    );
    await new Promise<void>((ok, fail) => {
      const sink = pack.entry({ name: `${hex}/layer.tar`, size: l.size, mtime, mode: 0o644 }, (e) =>
        e ? fail(e) : ok(),
      );
      createReadStream(l.file).pipe(sink);
    });
  }
  await add(`${configHex}.json`, config);
  await add('manifest.json', manifest);
  pack.finalize();
  await written;
  await rename(tmp, out);
  return `sha256:${configHex}`;
}

/** Builds the image archive at `out` from this checkout; returns its id and Debian packages. */
export async function buildServerImage(
  out = imagePath(),
  version = releaseVersion(),
  debs?: { deb: string; pkg: DebianPackage }[],
): Promise<Omit<ServerImage, 'path'>> {
  const packages = debs ?? (await fetchDebianPackages());
  const work = join(DIST, '.build', `guard-server-image-${version}-${process.pid}`);
  await rm(work, { recursive: true, force: true });
  try {
    const base = join(work, 'base');
    await stageBase(base, packages);
    const app = join(work, 'app');
    await stageServerTree(app, version);
    await install(
      join(PACKAGING, 'container', 'healthcheck.mjs'),
      join(app, 'usr/lib/guard-server/healthcheck.mjs'),
      0o644,
    );
    const doc = join(app, 'usr', 'share', 'doc', 'guard-server');
    await mkdir(doc, { recursive: true });
    await writeFile(
      join(doc, 'copyright'),
      copyright(
        'guard-server',
        'usr/lib/guard-server/node',
        'The npm packages under usr/lib/guard-server/app/node_modules carry their own licence files.',
      ),
    );
    const epoch = commitEpoch();
    const NODE = 'usr/lib/guard-server/node';
    const inNodeLayer = (rel: string) => rel === NODE || NODE.startsWith(rel);
    const layers = [
      await writeLayer(
        base,
        join(work, 'debian.tar'),
        epoch,
        `Debian 12 packages: ${packages.map((p) => `${p.pkg.name} ${p.pkg.version}`).join(', ')}`,
      ),
      await writeLayer(app, join(work, 'node.tar'), epoch, `Node.js ${nodeVersion()} (stripped)`, inNodeLayer),
      await writeLayer(app, join(work, 'guard.tar'), epoch, `guard-server ${version}`, (rel) => rel !== NODE),
    ];
    const config = Buffer.from(JSON.stringify(imageConfig(version, epoch, layers)));
    const id = await writeArchive(out, config, layers, [imageTag(version)], epoch);
    return { id, debianPackages: packages.map((p) => p.pkg), revision: revision() };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const sidecar = (out: string) => join(DIST, '.build', `${basename(out)}.json`);

/** Builds the image archive unless it is fresh; returns it and what it holds. */
export async function ensureServerImage(force = false): Promise<ServerImage> {
  const out = imagePath();
  const debs = await fetchDebianPackages();
  const inputs = [...SERVER_INPUTS, 'packages/console', 'packaging/container', 'packaging/build/image.ts'];
  const hash = sourceHash(
    inputs.filter((p) => existsSync(join(ROOT, p))),
    [releaseVersion(), nodeVersion(), revision(), String(commitEpoch()), ...debs.map((d) => d.pkg.sha256)],
  );
  await buildOnce(
    'server-image',
    hash,
    [out, sidecar(out)],
    async () => {
      const built = await buildServerImage(out, releaseVersion(), debs);
      await mkdir(join(DIST, '.build'), { recursive: true });
      await writeFile(sidecar(out), JSON.stringify(built));
    },
    force,
  );
  return builtServerImage();
}

/** The image archive already in dist/ and what it holds, as its build recorded it; never builds. */
export async function builtServerImage(): Promise<ServerImage> {
  const out = imagePath();
  if (!existsSync(out) || !existsSync(sidecar(out))) throw new Error(`${out} has not been built (npm run build:image)`);
  const { id, debianPackages, revision } = JSON.parse(await readFile(sidecar(out), 'utf8')) as Omit<
    ServerImage,
    'path'
  >;
  return { path: out, id, debianPackages, revision };
}

if (import.meta.main) {
  const t0 = Date.now();
  const image = await ensureServerImage(process.argv.includes('--force'));
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  console.log(`${image.path} (${mb((await stat(image.path)).size)}, ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  console.log(`  image id ${image.id}, tag ${imageTag()}`);
  console.log(`  Debian packages: ${image.debianPackages.map((p) => `${p.name} ${p.version}`).join(', ')}`);
  console.log(`  load it: podman load -i ${image.path}   (or docker load -i)`);
}
