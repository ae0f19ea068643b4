// What `npm run release:build` needs on the machine, checked before anything is built: a
// missing tool otherwise shows up minutes in, as a stack trace of whichever builder first runs
// it. Each entry names the Debian package that provides it, so the message ends in one
// `apt-get install` line. The list is read off the builders in this directory; a builder that
// starts running another program adds it here.
//
//   agent-sea.ts       strip (binutils); postject and esbuild from npm
//   exec-probe.ts      scripts/build-exec-probe.sh: clang, bpftool, llvm-strip, libbpf-dev,
//                      libelf-dev, zlib1g-dev, linux-libc-dev, flock, the kernel's BTF
//   deb.ts             dpkg-deb (dpkg), dpkg-shlibdeps (dpkg-dev), lintian; git for the
//                      changelog's date (xz is dpkg-deb's own library, not the xz command;
//                      --root-owner-group, so no fakeroot)
//   server-deb.ts      npm (npm ls, the console's build), strip
//   webhooks-package   npm pack, tsc and publint from npm
//   listen-package     npm pack, esbuild
//   image.ts           apt-get and Debian's archive key (the image's Debian packages)
//   release.ts         sha256sum (coreutils) for `sha256sum -c SHA256SUMS`
//   the tests it runs  podman, runc, debootstrap (the containers of packaging/test/container.ts),
//                      logrotate, and Debian's Node.js as /usr/bin/node (the SDK and guard
//                      listen run on Node 20 too)

import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { NODE_BIN, ROOT } from './paths.ts';

/** Which parts of a release are being made: each prerequisite belongs to one. */
export interface ReleasePlan {
  execProbe: boolean;
  image: boolean;
  tests: boolean;
}

export type Part = 'always' | keyof ReleasePlan;

export interface Prerequisite {
  /** What is looked for: a command on PATH, or an absolute file. */
  command?: string;
  file?: string;
  /** What a person reads when it is missing (defaults to the command or file). */
  what?: string;
  /** Where it comes from: a Debian package, or `npm install` in the checkout. */
  debian?: string;
  npm?: true;
  /** When the file is none a package can bring (the kernel's BTF): what to do instead. */
  hint?: string;
  /** What the build does with it. */
  for: string;
  part: Part;
}

const LIBDIR = `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu`;
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

export const PREREQUISITES: Prerequisite[] = [
  { command: 'npm', debian: 'npm', for: 'npm ls, npm pack, npm sbom', part: 'always' },
  { command: 'git', debian: 'git', for: 'the .debs’ changelog date and file time stamps', part: 'always' },
  {
    command: 'strip',
    debian: 'binutils',
    for: 'stripping the Node.js runtime in the executable and the server .deb',
    part: 'always',
  },
  { command: 'dpkg-deb', debian: 'dpkg', for: 'building the .debs', part: 'always' },
  { command: 'dpkg-shlibdeps', debian: 'dpkg-dev', for: 'the .debs’ Depends', part: 'always' },
  { command: 'lintian', debian: 'lintian', for: 'checking the .debs', part: 'always' },
  { command: 'sha256sum', debian: 'coreutils', for: 'checking SHA256SUMS', part: 'always' },
  {
    file: NODE_BIN,
    what: 'the pinned Node.js 24 runtime',
    npm: true,
    for: 'the executable and the server .deb',
    part: 'always',
  },
  { file: bin('postject'), what: 'postject', npm: true, for: 'the single executable', part: 'always' },
  { file: bin('esbuild'), what: 'esbuild', npm: true, for: 'bundling the agent and guard listen', part: 'always' },
  { file: bin('tsc'), what: 'tsc (TypeScript)', npm: true, for: 'compiling @guard/webhooks', part: 'always' },
  { file: bin('publint'), what: 'publint', npm: true, for: 'checking @guard/webhooks', part: 'always' },
  { command: 'clang', debian: 'clang', for: 'the exec probe', part: 'execProbe' },
  { command: 'bpftool', debian: 'bpftool', for: 'the exec probe’s vmlinux.h and skeleton', part: 'execProbe' },
  { command: 'llvm-strip', debian: 'llvm', for: 'the exec probe’s BPF object', part: 'execProbe' },
  { command: 'flock', debian: 'util-linux', for: 'scripts/build-exec-probe.sh', part: 'execProbe' },
  {
    file: '/usr/include/bpf/bpf_helpers.h',
    what: 'libbpf headers',
    debian: 'libbpf-dev',
    for: 'the exec probe',
    part: 'execProbe',
  },
  {
    file: `${LIBDIR}/libbpf.a`,
    what: 'libbpf.a',
    debian: 'libbpf-dev',
    for: 'the exec probe (linked statically)',
    part: 'execProbe',
  },
  {
    file: `${LIBDIR}/libelf.a`,
    what: 'libelf.a',
    debian: 'libelf-dev',
    for: 'the exec probe (linked statically)',
    part: 'execProbe',
  },
  {
    file: `${LIBDIR}/libz.a`,
    what: 'libz.a',
    debian: 'zlib1g-dev',
    for: 'the exec probe (linked statically)',
    part: 'execProbe',
  },
  {
    file: '/usr/include/linux/types.h',
    what: 'kernel headers',
    debian: 'linux-libc-dev',
    for: 'the exec probe',
    part: 'execProbe',
  },
  {
    file: '/sys/kernel/btf/vmlinux',
    what: 'the kernel’s BTF',
    hint: 'boot a kernel built with CONFIG_DEBUG_INFO_BTF (Debian’s are), or build with --without-exec-probe',
    for: 'the exec probe’s vmlinux.h',
    part: 'execProbe',
  },
  { command: 'apt-get', debian: 'apt', for: 'the server image’s Debian packages', part: 'image' },
  {
    file: '/usr/share/keyrings/debian-archive-keyring.gpg',
    what: 'Debian’s archive key',
    debian: 'debian-archive-keyring',
    for: 'checking the image’s Debian packages',
    part: 'image',
  },
  {
    command: 'podman-compose',
    debian: 'podman-compose',
    for: 'the compose files’ tests',
    part: 'tests',
  },
  { command: 'podman', debian: 'podman', for: 'the package tests’ throw-away containers', part: 'tests' },
  { command: 'runc', debian: 'runc', for: 'the package tests’ containers', part: 'tests' },
  {
    file: '/usr/sbin/debootstrap',
    what: 'debootstrap',
    debian: 'debootstrap',
    for: 'the containers’ root file system',
    part: 'tests',
  },
  {
    file: '/usr/sbin/logrotate',
    what: 'logrotate',
    debian: 'logrotate',
    for: 'the agent’s logrotate rule test',
    part: 'tests',
  },
  {
    file: '/usr/bin/node',
    what: 'Node.js 20 (/usr/bin/node)',
    debian: 'nodejs',
    for: 'the SDK and guard listen on Node 20',
    part: 'tests',
  },
];

/** Where `command` is on `path` (a PATH value), or undefined. */
export function onPath(command: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

/** The prerequisites of `plan` that this machine lacks, looking up commands on `path`. */
export function missingPrerequisites(plan: ReleasePlan, path: string, list = PREREQUISITES): Prerequisite[] {
  const wanted = (p: Prerequisite) => p.part === 'always' || plan[p.part];
  return list.filter((p) => wanted(p) && (p.command ? !onPath(p.command, path) : !existsSync(p.file as string)));
}

/** What release:build prints when something is missing: each thing, its package, and the commands. */
export function describeMissing(missing: Prerequisite[], asRoot: boolean): string {
  const name = (p: Prerequisite) => p.what ?? p.command ?? p.file ?? '';
  const from = (p: Prerequisite) =>
    p.debian ? `Debian package ${p.debian}` : p.npm ? 'npm install (in the checkout)' : (p.hint ?? '');
  const width = Math.max(...missing.map((p) => name(p).length));
  const lines = [
    'release:build: missing on this machine, nothing was built:',
    ...missing.map((p) => `  ${name(p).padEnd(width)}  ${from(p)}  (${p.for})`),
  ];
  const debian = [...new Set(missing.flatMap((p) => (p.debian ? [p.debian] : [])))];
  const fixes = [
    ...(debian.length ? [`${asRoot ? '' : 'sudo '}apt-get install -y ${debian.join(' ')}`] : []),
    ...(missing.some((p) => p.npm) ? ['npm install'] : []),
  ];
  if (fixes.length) lines.push('Install with:', ...fixes.map((f) => `  ${f}`));
  for (const p of missing) if (p.hint) lines.push(`${name(p)}: ${p.hint}`);
  return lines.join('\n');
}
