// The .deb packages on this machine (issue 13): lintian finds no error; then install,
// upgrade and purge with dpkg into the real root — what an operator's configuration
// management does — checking files, modes, conffiles, the unit (systemd-analyze verify) and
// that the installed programs run. One file for both packages: dpkg takes one lock, so the
// round trips run one after the other. Each package is purged in `after` whatever happened.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildAgentDeb, ensureAgentDeb } from '../build/agent-deb.ts';
import { lintianAsync } from '../build/deb.ts';
import { releaseVersion } from '../build/paths.ts';
import { buildServerDeb, ensureServerDeb } from '../build/server-deb.ts';
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

/** What systemd's enablement left of a unit: the wants link and deb-systemd-helper's state. */
function enablementLeft(unit: string): string[] {
  const out = sh('sh', [
    '-c',
    'ls -d /etc/systemd/system/*/"$1" /var/lib/systemd/deb-systemd-helper-*/"$1"* /var/lib/systemd/deb-systemd-helper-*/*/"$1"* 2>/dev/null; true',
    'sh',
    unit,
  ]).out;
  return out.split('\n').filter(Boolean);
}

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
  let lint: Promise<string[]>;
  before(async () => {
    deb = await ensureAgentDeb('test');
    lint = lintianAsync(deb);
    lint.catch(() => {}); // awaited by its test
    purge('guard-agent'); // left by an interrupted earlier run
    for (const p of ['/etc/guard/agent.yaml', '/var/lib/guard', '/var/log/guard'])
      assert.ok(!existsSync(p), `${p} exists but guard-agent is not installed: not ours to remove; move it away first`);
  });
  after(() => purge('guard-agent'));

  it('installs: /usr/bin/guard-agent runs, agent.yaml is a conffile, state and logs 0750, the unit verifies', async () => {
    dpkgInstall(deb);
    assert.ok(existsSync('/etc/systemd/system/multi-user.target.wants/guard-agent.service'), 'the unit is enabled');
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
      'guard-agent-daemon',
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
    assert.deepEqual(enablementLeft('guard-agent.service'), []);
  });

  it('lintian reports no error (run beside the steps above)', async () => {
    const tags = await lint;
    assert.deepEqual(
      tags.filter((t) => t.startsWith('E:')),
      [],
      tags.join('\n'),
    );
  });
});

/** A free loopback port (bound and released: the server under test binds it a moment later). */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((ok) => srv.close(ok));
  return port;
}

/** Runs a command as the guard user (setpriv execs: signals reach the program itself). */
function asGuard(args: string[]): string[] {
  return ['setpriv', '--reuid=guard', '--regid=guard', '--init-groups', '--', ...args];
}

describe('guard-server .deb', () => {
  let deb: string;
  let lint: Promise<string[]>;
  let userExisted = false;
  before(async () => {
    deb = await ensureServerDeb('test');
    lint = lintianAsync(deb);
    lint.catch(() => {}); // awaited by its test
    purge('guard-server');
    for (const p of ['/etc/guard/server.yaml', '/var/lib/guard-server'])
      assert.ok(
        !existsSync(p),
        `${p} exists but guard-server is not installed: not ours to remove; move it away first`,
      );
    userExisted = sh('getent', ['passwd', 'guard']).code === 0;
  });
  after(() => {
    purge('guard-server');
    // Debian leaves a package's system user behind on purge; the test removes the one it made.
    if (!userExisted && sh('getent', ['passwd', 'guard']).code === 0) must('deluser', ['--system', '--quiet', 'guard']);
  });

  it('installs: the guard system user, data 0750 guard:guard, server.yaml a 0640 root:guard conffile, the unit verifies', async () => {
    dpkgInstall(deb);
    assert.equal(installed('guard-server')?.version, VERSION);
    const [, , uid, , , home, shell] = must('getent', ['passwd', 'guard']).trim().split(':');
    assert.ok(Number(uid) < 1000, `guard is a system user (uid ${uid})`);
    assert.equal(home, '/var/lib/guard-server');
    assert.equal(shell, '/usr/sbin/nologin');
    const data = await stat('/var/lib/guard-server');
    assert.equal(data.mode & 0o7777, 0o750);
    assert.equal(data.uid, Number(uid));
    const conf = await stat('/etc/guard/server.yaml');
    assert.equal(conf.mode & 0o7777, 0o640);
    assert.equal(conf.uid, 0);
    assert.equal(conf.gid, data.gid);
    assert.deepEqual(conffiles('guard-server'), ['/etc/guard/server.yaml']);
    verifyUnit('/lib/systemd/system/guard-server.service');
    const score = exposure('/lib/systemd/system/guard-server.service');
    assert.ok(score <= 2, `systemd-analyze security: exposure ${score} (want at most 2)`);
    for (const page of ['guard-server', 'guard-server-setup'])
      assert.match(must('man', ['-w', page]), new RegExp(`/usr/share/man/man1/${page}\\.1\\.gz`));
    assert.equal(must('/usr/bin/guard-server', ['--version']).trim(), `guard-server ${VERSION}`);
  });

  it('runs as guard on the packaged configuration: setup, then serve answers the API and stops on SIGTERM', async () => {
    const [cmd, ...args] = asGuard(['/usr/bin/guard-server', 'setup', '--json']);
    const setup = JSON.parse(must(cmd, args));
    assert.match(setup.admin_token, /^gut_/);
    assert.ok(existsSync('/var/lib/guard-server/guard.db'), 'setup wrote the packaged data directory');

    const port = await freePort();
    const argv = asGuard(['/usr/bin/guard-server', 'serve', '--listen', `127.0.0.1:${port}`, '--metrics-listen', '']);
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const exited = new Promise<number | null>((ok) => child.on('close', ok));
    try {
      const url = `http://127.0.0.1:${port}`;
      let ready = false;
      for (let i = 0; i < 200 && !ready; i++) {
        ready = await fetch(`${url}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (!ready) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(ready, `guard-server did not become ready:\n${output}`);
      const servers = await fetch(`${url}/v1/servers`, { headers: { authorization: `Bearer ${setup.admin_token}` } });
      assert.equal(servers.status, 200);
      const console = await fetch(`${url}/console/`);
      // 200 with the console package in the checkout; otherwise the "console not built" page.
      assert.ok([200, 503].includes(console.status), `GET /console/ answered ${console.status}`);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, output);
  });

  it('upgrades: the edited conffile, the data and the user are kept', async () => {
    const conf = await readFile('/etc/guard/server.yaml', 'utf8');
    await writeFile('/etc/guard/server.yaml', conf.replace('log_level: info', 'log_level: warn'));
    const next = join(tmp, `guard-server_${UPGRADE_VERSION}_amd64.deb`);
    await buildServerDeb(next, UPGRADE_VERSION, { type: 'gzip', level: 1 });
    dpkgInstall(next);
    assert.equal(installed('guard-server')?.version, UPGRADE_VERSION);
    assert.match(await readFile('/etc/guard/server.yaml', 'utf8'), /^log_level: warn$/m);
    assert.equal((await stat('/etc/guard/server.yaml')).mode & 0o7777, 0o640);
    assert.ok(existsSync('/var/lib/guard-server/guard.db'));
    assert.equal(sh('getent', ['passwd', 'guard']).code, 0);
  });

  it('purges: the program, configuration and data are gone', () => {
    must('dpkg', ['--purge', 'guard-server']);
    assert.equal(installed('guard-server'), undefined);
    for (const p of [
      '/usr/bin/guard-server',
      '/usr/lib/guard-server',
      '/etc/guard/server.yaml',
      '/var/lib/guard-server',
      '/lib/systemd/system/guard-server.service',
    ])
      assert.ok(!existsSync(p), `${p} is left after purge`);
    assert.deepEqual(enablementLeft('guard-server.service'), []);
  });

  it('lintian reports no error (run beside the steps above)', async () => {
    const tags = await lint;
    assert.deepEqual(
      tags.filter((t) => t.startsWith('E:')),
      [],
      tags.join('\n'),
    );
  });
});
