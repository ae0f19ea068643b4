// A .deb from a staged tree with Debian's own tools (no debhelper: the packages are simple
// and built from a Node checkout): DEBIAN/control with the shared-library dependencies that
// dpkg-shlibdeps finds, conffiles (every file under /etc), md5sums, the maintainer scripts,
// /usr/share/doc/<name>/{copyright,changelog.gz}, gzipped man pages; then
// `dpkg-deb --root-owner-group --build`. File modes come from the staged tree.

import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT } from './paths.ts';

export const MAINTAINER = 'Guard maintainers <guard-maintainers@lists.guard.invalid>';

/** A release package, or the tests' build of the same tree. */
export type Flavour = 'release' | 'test';
export const COMPRESSION: Record<Flavour, NonNullable<DebSpec['compression']>> = {
  release: { type: 'xz', level: 6 },
  test: { type: 'gzip', level: 1 },
};

export interface DebSpec {
  name: string;
  version: string;
  /** The staged file system tree (usr/, etc/, lib/, var/ ...); DEBIAN/ is written into it. */
  stage: string;
  section: string;
  /** Extra dependencies beside the shared libraries' (e.g. adduser). */
  depends?: string[];
  /** Files whose shared-library dependencies go into Depends, relative to the stage. */
  elfFiles: string[];
  description: string;
  /** Maintainer scripts by name (postinst, prerm, postrm, preinst): shell text. */
  scripts: Record<string, string>;
  /** Out file. */
  out: string;
  /** dpkg-deb compression: xz for releases; a test's throw-away upgrade package may use gzip -1. */
  compression?: { type: 'xz' | 'gzip' | 'none'; level?: number };
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else if (e.isFile()) out.push(p); // symlinks: no md5sum, no size of their own
  }
  return out;
}

/** Date for the Debian changelog: the last commit's, so a rebuild of the same tree is the same. */
function changelogDate(): string {
  try {
    return execFileSync('git', ['log', '-1', '--format=%aD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return new Date(0).toUTCString().replace('GMT', '+0000');
  }
}

/** Seconds of the last commit: the time stamp dpkg-deb gives the archive members. */
function commitEpoch(): string {
  try {
    return execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return '0';
  }
}

/** Writes a file gzipped the Debian way (-9n: no name, no time stamp). */
export async function writeGzip(path: string, text: string | Buffer, mode = 0o644): Promise<void> {
  await writeFile(path, gzipSync(text, { level: 9 }));
  await chmod(path, mode);
}

/** Copies the man pages of `dir` into the stage, version filled in, gzipped. */
export async function stageManPages(dir: string, stage: string, version: string): Promise<void> {
  const man1 = join(stage, 'usr', 'share', 'man', 'man1');
  await mkdir(man1, { recursive: true });
  for (const page of (await readdir(dir)).filter((n) => n.endsWith('.1'))) {
    const text = (await readFile(join(dir, page), 'utf8')).replaceAll('@VERSION@', version);
    await writeGzip(join(man1, `${page}.gz`), text);
  }
}

/** Copies `from` to `to` in the stage (parents made) with `mode`. */
export async function install(from: string, to: string, mode: number): Promise<void> {
  await mkdir(join(to, '..'), { recursive: true });
  await copyFile(from, to);
  await chmod(to, mode);
}

export async function writeDocs(spec: DebSpec, copyright: string): Promise<void> {
  const doc = join(spec.stage, 'usr', 'share', 'doc', spec.name);
  await mkdir(doc, { recursive: true });
  await writeFile(join(doc, 'copyright'), copyright);
  const changelog = `${spec.name} (${spec.version}) stable; urgency=medium

  * Release ${spec.version}; the project's CHANGELOG.md lists the changes.

 -- ${MAINTAINER}  ${changelogDate()}
`;
  await writeGzip(join(doc, 'changelog.gz'), changelog);
}

/** Depends of the ELF files, from dpkg-shlibdeps (it needs a debian/control to read; a minimal one). */
function shlibDepends(stage: string, name: string, elfFiles: string[]): string {
  const work = join(stage, '..', `${name}-shlibdeps`);
  execFileSync('rm', ['-rf', work]);
  execFileSync('mkdir', ['-p', join(work, 'debian')]);
  execFileSync('sh', [
    '-c',
    `printf 'Source: %s\\n\\nPackage: %s\\nArchitecture: amd64\\n' "$1" "$1" > "$2/debian/control"`,
    'sh',
    name,
    work,
  ]);
  const out = execFileSync('dpkg-shlibdeps', ['-O', ...elfFiles.map((f) => `-e${join(stage, f)}`)], {
    cwd: work,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  execFileSync('rm', ['-rf', work]);
  const m = /^shlibs:Depends=(.*)$/m.exec(out);
  if (!m) throw new Error(`dpkg-shlibdeps printed no shlibs:Depends: ${out}`);
  return m[1];
}

export async function buildDeb(spec: DebSpec): Promise<void> {
  await mkdir(join(spec.out, '..'), { recursive: true });
  const control = join(spec.stage, 'DEBIAN');
  await rm(control, { recursive: true, force: true });
  await mkdir(control, { mode: 0o755 });
  const files = (await walk(spec.stage)).filter((f) => !f.startsWith(`${control}/`));

  const conffiles = files
    .filter((f) => relative(spec.stage, f).startsWith('etc/'))
    .map((f) => `/${relative(spec.stage, f)}`);
  if (conffiles.length) await writeFile(join(control, 'conffiles'), `${conffiles.sort().join('\n')}\n`);

  const md5 = await Promise.all(
    files.map(
      async (f) =>
        `${createHash('md5')
          .update(await readFile(f))
          .digest('hex')}  ${relative(spec.stage, f)}`,
    ),
  );
  await writeFile(
    join(control, 'md5sums'),
    `${md5.sort((a, b) => a.slice(34).localeCompare(b.slice(34))).join('\n')}\n`,
  );

  let installedKiB = 0;
  for (const f of files) installedKiB += Math.ceil((await stat(f)).size / 1024);
  const depends = [shlibDepends(spec.stage, spec.name, spec.elfFiles), ...(spec.depends ?? [])].join(', ');
  const [summary, ...rest] = spec.description.trim().split('\n');
  const fields = [
    `Package: ${spec.name}`,
    `Version: ${spec.version}`,
    'Architecture: amd64',
    `Maintainer: ${MAINTAINER}`,
    `Installed-Size: ${installedKiB}`,
    `Depends: ${depends}`,
    `Section: ${spec.section}`,
    'Priority: optional',
    `Description: ${summary}`,
    ...rest.map((l) => (l.trim() === '' ? ' .' : ` ${l.trim()}`)),
  ];
  await writeFile(join(control, 'control'), `${fields.join('\n')}\n`);
  for (const [script, text] of Object.entries(spec.scripts)) {
    await writeFile(join(control, script), text);
    await chmod(join(control, script), 0o755);
  }
  const c = spec.compression ?? COMPRESSION.release;
  execFileSync(
    'dpkg-deb',
    [
      '--root-owner-group',
      `-Z${c.type}`,
      ...(c.level === undefined ? [] : [`-z${c.level}`]),
      '--build',
      spec.stage,
      spec.out,
    ],
    { stdio: 'pipe', env: { ...process.env, SOURCE_DATE_EPOCH: process.env.SOURCE_DATE_EPOCH ?? commitEpoch() } },
  );
}

const LINTIAN_ARGS = ['--fail-on', 'none', '--tag-display-limit', '0'];
const tagLines = (out: string) => out.split('\n').filter((l) => /^[EWIPNX]: /.test(l));

/** lintian's tags for a .deb as `X: package: tag detail` lines (errors E:, warnings W:, ...). */
export function lintian(deb: string): string[] {
  let out: string;
  try {
    out = execFileSync('lintian', [...LINTIAN_ARGS, deb], { encoding: 'utf8' });
  } catch (e) {
    throw new Error(`lintian failed to run on ${deb}: ${(e as Error).message}`);
  }
  return tagLines(out);
}

/** lintian in the background (it only reads the .deb): the tests install meanwhile. */
export function lintianAsync(deb: string): Promise<string[]> {
  return new Promise((ok, fail) => {
    execFile('lintian', [...LINTIAN_ARGS, deb], { encoding: 'utf8', maxBuffer: 16 << 20 }, (error, stdout) => {
      if (error) fail(new Error(`lintian failed to run on ${deb}: ${error.message}`));
      else ok(tagLines(stdout));
    });
  });
}
