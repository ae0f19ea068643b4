// The .deb packages on this machine (issue 13): lintian finds no error; then install,
// upgrade and purge with dpkg into the real root — what an operator's configuration
// management does — checking files, modes, conffiles, the unit (systemd-analyze verify) and
// that the installed programs run. One file for both packages: dpkg takes one lock, so the
// round trips run one after the other. Each package is purged in `after` whatever happened.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentDebPath, buildAgentDeb, ensureAgentDeb } from '../build/agent-deb.ts';
import { lintian } from '../build/deb.ts';
import { releaseVersion } from '../build/paths.ts';
import { conffiles, dpkgInstall, installed, must, purge, requireDpkg, sh } from './dpkg.ts';

const VERSION = releaseVersion();
/** A later version for the upgrade step: same tree, a version dpkg sorts after the release. */
const UPGRADE_VERSION = `${VERSION}+upgradetest1`;
let tmp: string;

before(async () => {
  requireDpkg();
  tmp = await mkdtemp(join(os.tmpdir(), 'guard-deb-test-'));
});
after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const mode = async (p: string) => (await stat(p)).mode & 0o7777;

function verifyUnit(unit: string): void {
  const r = sh('systemd-analyze', ['verify', unit]);
  // Lines about other units of this machine (a container's) are not ours to judge.
  const ours = r.out.split('\n').filter((l) => l.includes('guard-'));
  assert.deepEqual(ours, [], `systemd-analyze verify ${unit}:\n${r.out}`);
}

function exposure(unit: string): number {
  const out = must('systemd-analyze', ['security', '--offline=yes', unit]);
  const m = /Overall exposure level for \S+: ([\d.]+)/.exec(out);
  assert.ok(m, out);
  return Number(m[1]);
}

describe('guard-agent .deb', () => {
  let deb: string;
  before(async () => {
    deb = await ensureAgentDeb();
    purge('guard-agent'); // left by an interrupted earlier run
    for (const p of ['/etc/guard/agent.yaml', '/var/lib/guard', '/var/log/guard'])
      assert.ok(!existsSync(p), `${p} exists but guard-agent is not installed: not ours to remove; move it away first`);
  });
  after(() => purge('guard-agent'));

  it('lintian reports no error', () => {
    const tags = lintian(deb);
    assert.deepEqual(
      tags.filter((t) => t.startsWith('E:')),
      [],
      tags.join('\n'),
    );
  });

  it('installs: /usr/bin/guard-agent runs, agent.yaml is a conffile, state and logs 0750, the unit verifies', async () => {
    dpkgInstall(deb);
    assert.equal(installed('guard-agent')?.version, VERSION);
    assert.equal(must('/usr/bin/guard-agent', ['--version']).trim(), VERSION);
    assert.deepEqual(conffiles('guard-agent').sort(), ['/etc/guard/agent.yaml', '/etc/logrotate.d/guard-agent']);
    assert.equal(await mode('/var/lib/guard'), 0o750);
    assert.equal(await mode('/var/log/guard'), 0o750);
    assert.equal(await mode('/usr/bin/guard-agent'), 0o755);
    verifyUnit('/lib/systemd/system/guard-agent.service');
    const score = exposure('/lib/systemd/system/guard-agent.service');
    assert.ok(score <= 3, `systemd-analyze security: exposure ${score} (want at most 3)`);
    for (const page of [
      'guard-agent',
      'guard-agent-enroll',
      'guard-agent-support-bundle-collect',
      'guard-agent-support-bundle-upload',
    ])
      assert.match(must('man', ['-w', page]), new RegExp(`/usr/share/man/man1/${page}\\.1\\.gz`));
  });

  it('the installed rule rotates the installed log and the installed agent collects it with the default config', async () => {
    await writeFile('/var/log/guard/agent.log', 'time=2026-11-21T08:00:00.000Z level=INFO msg="one" api_key=k1\n');
    must('/usr/sbin/logrotate', ['--force', '--state', join(tmp, 'state'), '/etc/logrotate.d/guard-agent']);
    await writeFile('/var/log/guard/agent.log', 'time=2026-11-21T09:00:00.000Z level=INFO msg="two"\n');
    assert.ok(existsSync('/var/log/guard/agent.log.1.gz'));
    const out = join(tmp, 'bundle.tar.zst');
    const bundle = must('/usr/bin/guard-agent', ['support-bundle', 'collect', '--out', out]);
    assert.match(bundle, new RegExp(out));
    const names = execFileSync('tar', ['--zstd', '-tf', out], { encoding: 'utf8' }).split('\n').filter(Boolean);
    assert.deepEqual(names.sort(), [
      'BUNDLE-MANIFEST.json',
      'agent.log',
      'agent.log.1.gz',
      'config.redacted.json',
      'system.json',
    ]);
  });

  it('upgrades: the operator-edited conffile and the enrolment are kept; the new version runs', async () => {
    await appendFile('/etc/guard/agent.yaml', 'environment: upgrade-test\n');
    await writeFile('/var/lib/guard/enrollment.json', '{"base_url":"https://guard.invalid"}\n', { mode: 0o600 });
    const next = join(tmp, `guard-agent_${UPGRADE_VERSION}_amd64.deb`);
    await buildAgentDeb(next, UPGRADE_VERSION, { type: 'gzip', level: 1 });
    dpkgInstall(next);
    assert.equal(installed('guard-agent')?.version, UPGRADE_VERSION);
    assert.match(await readFile('/etc/guard/agent.yaml', 'utf8'), /environment: upgrade-test/);
    assert.equal(await readFile('/var/lib/guard/enrollment.json', 'utf8'), '{"base_url":"https://guard.invalid"}\n');
    assert.equal(await mode('/var/lib/guard'), 0o750);
    assert.equal(must('/usr/bin/guard-agent', ['--version']).trim(), VERSION); // the executable's own version
  });

  it('purges: the program, its configuration, state, logs and unit are gone', () => {
    must('dpkg', ['--purge', 'guard-agent']);
    assert.equal(installed('guard-agent'), undefined);
    for (const p of [
      '/usr/bin/guard-agent',
      '/etc/guard/agent.yaml',
      '/etc/logrotate.d/guard-agent',
      '/var/lib/guard',
      '/var/log/guard',
      '/lib/systemd/system/guard-agent.service',
      '/usr/share/doc/guard-agent',
    ])
      assert.ok(!existsSync(p), `${p} is left after purge`);
  });
});

export { agentDebPath };
