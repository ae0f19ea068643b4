// release:build checks its tools before it builds anything (issue 23): run for real with a
// PATH that lacks lintian, it names lintian, its Debian package and the install command, exits
// 2 within seconds, and leaves dist/ as it was. The list itself is checked against the
// builders: every program they run is in it.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AGENT_SEA } from '../build/agent-sea.ts';
import { imagePath } from '../build/image.ts';
import { listenTarball } from '../build/listen-package.ts';
import { DIST, PACKAGING, ROOT } from '../build/paths.ts';
import { describeMissing, missingPrerequisites, onPath, PREREQUISITES } from '../build/prerequisites.ts';
import { webhooksTarball } from '../build/webhooks-package.ts';

let tmp: string;
before(async () => {
  tmp = await mkdtemp(join(os.tmpdir(), 'guard-release-prereq-'));
});
after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/**
 * What the package tests build into dist/ for themselves (artefacts.ts), and the builds'
 * bookkeeping: other test files build them while this one runs (the suite runs two at once),
 * so they are left out of the snapshot. What only a release writes stays in it: the release
 * .debs, the exec probe, the SBOMs, SHA256SUMS.
 */
const BUILT_BY_TESTS = new Set([
  ...['.test', '.stamps', '.build'].map((d) => join(DIST, d)),
  AGENT_SEA,
  imagePath(),
  listenTarball(),
  webhooksTarball(),
]);

/** Names and modification times of everything under dist/ (but the tests' own builds). */
function distSnapshot(): string[] {
  if (!existsSync(DIST)) return [];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (BUILT_BY_TESTS.has(p)) continue;
      if (e.isDirectory()) walk(p);
      else out.push(`${p} ${statSync(p).mtimeMs}`);
    }
  };
  walk(DIST);
  return out.sort();
}

describe('release:build without a tool it needs', () => {
  it('names lintian with its Debian package and the install command, exits 2 at once, builds nothing', async () => {
    // A PATH holding every tool the build looks for that this machine has, but lintian, plus
    // what npm itself runs on (sh, and node for its #!/usr/bin/env line).
    const bin = join(tmp, 'bin');
    await mkdir(bin);
    const wanted = new Set([...PREREQUISITES.flatMap((p) => (p.command ? [p.command] : [])), 'sh', 'node']);
    wanted.delete('lintian');
    for (const command of wanted) {
      const found = onPath(command, process.env.PATH ?? '');
      if (found) await symlink(found, join(bin, command));
    }
    assert.ok(existsSync(join(bin, 'npm')), 'npm is on this machine');
    const before = distSnapshot();
    const t0 = Date.now();
    const r = spawnSync('npm', ['run', '--silent', 'release:build', '--', '--without-image'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, PATH: bin },
      timeout: 60_000,
    });
    const elapsed = Date.now() - t0;
    const out = `${r.stdout}${r.stderr}`;
    assert.equal(r.status, 2, out);
    assert.match(r.stderr, /^release:build: missing on this machine, nothing was built:$/m);
    assert.match(r.stderr, /^ {2}lintian +Debian package lintian +\(checking the \.debs\)$/m);
    assert.match(r.stderr, /^Install with:\n {2}(sudo )?apt-get install -y (\S+ )*lintian( |$)/m);
    assert.doesNotMatch(out, /at .*\.ts:\d+/, 'no stack trace');
    assert.doesNotMatch(out, /build-exec-probe|lintian guard-/, 'no build step ran');
    assert.ok(elapsed < 20_000, `took ${elapsed} ms`);
    assert.deepEqual(distSnapshot(), before, 'dist/ is as it was');
  });
});

describe('the prerequisites', () => {
  it('follow the plan: the exec probe’s tools only with the probe, the tests’ only with the tests', () => {
    const none = { execProbe: false, image: false, tests: false };
    const names = (plan: typeof none) => missingPrerequisites(plan, '').map((p) => p.command ?? p.what);
    assert.ok(!names(none).includes('clang'));
    assert.ok(names({ ...none, execProbe: true }).includes('clang'));
    assert.ok(!names(none).includes('podman'));
    assert.ok(names({ ...none, tests: true }).includes('podman'));
    assert.ok(names({ ...none, image: true }).includes('apt-get'));
    assert.ok(names(none).includes('lintian') && names(none).includes('dpkg-shlibdeps'));
  });

  it('the message installs every missing Debian package in one command, and says npm install for npm’s', () => {
    const missing = PREREQUISITES.filter((p) => ['lintian', 'dpkg-shlibdeps', 'strip'].includes(p.command ?? ''));
    missing.push(...PREREQUISITES.filter((p) => p.what === 'publint'));
    const text = describeMissing(missing, false);
    assert.match(text, /^ {2}sudo apt-get install -y binutils dpkg-dev lintian$/m);
    assert.match(text, /^ {2}npm install$/m);
    assert.match(text, /dpkg-shlibdeps +Debian package dpkg-dev/);
  });

  it('list every program the builders run', () => {
    // POSIX basics every Debian system has (coreutils, dash, tar are Essential).
    const basics = new Set(['sh', 'bash', 'rm', 'mkdir', 'tar', 'dpkg-query']);
    const listed = new Set(PREREQUISITES.flatMap((p) => (p.command ? [p.command] : [])));
    const build = join(PACKAGING, 'build');
    for (const file of readdirSync(build).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(build, file), 'utf8');
      for (const m of text.matchAll(/\b(?:execFileSync|execFile|spawnSync|spawn)\(\s*'([\w.-]+)'/g))
        assert.ok(basics.has(m[1]) || listed.has(m[1]), `${file} runs ${m[1]}, which prerequisites.ts does not check`);
    }
  });
});
