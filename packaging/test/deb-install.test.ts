// The .deb packages (issues 13 and 19): lintian finds no error; then install, upgrade and purge
// with dpkg — what an operator's configuration management does — each inside a throw-away
// Debian 12 container (container.ts), never on the machine running the tests: files, modes,
// conffiles, the unit (systemd-analyze verify and security), and that the installed programs
// run. The agent's daemon is started from the installed unit's own ExecStart= line (no
// systemd needed) against a guard-server on the host's loopback (the container shares the
// host's network): it heartbeats, makes a console-pushed bundle and writes its log where the
// package's configuration says.

import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type GuardServer, type Loose, startGuardServer, waitFor } from '../../packages/agent/test/upload-harness.ts';
import { freePort } from '../../packages/server/test/loopback.ts';
import { AGENT_EXEC_PROBE, buildAgentDeb } from '../build/agent-deb.ts';
import { lintianAsync } from '../build/deb.ts';
import { releaseVersion } from '../build/paths.ts';
import { buildServerDeb } from '../build/server-deb.ts';
import { agentDeb, serverDeb } from './artefacts.ts';
import { Container } from './container.ts';
import { conffiles, dpkgInstall, enablementLeft, execStart, installed } from './dpkg.ts';

const VERSION = releaseVersion();
/** A later version for the upgrade step: same tree, a version dpkg sorts after the release. */
const UPGRADE_VERSION = `${VERSION}+upgradetest1`;
/** The host directory the containers see read-only at /host: the packages under test. */
const HOST = '/host';
let tmp: string;

before(async () => {
  tmp = await mkdtemp(join(os.tmpdir(), 'guard-deb-test-'));
});
after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

function verifyUnit(c: Container, unit: string): void {
  const r = c.exec(['systemd-analyze', 'verify', unit]);
  // Lines about other units of the container are not ours to judge.
  const ours = r.out.split('\n').filter((l) => l.includes('guard-'));
  assert.deepEqual(ours, [], `systemd-analyze verify ${unit}:\n${r.out}`);
}

function exposure(c: Container, unit: string): number {
  const out = c.must(['systemd-analyze', 'security', '--offline=yes', unit]);
  const m = /Overall exposure level for \S+: ([\d.]+)/.exec(out);
  assert.ok(m, out);
  return Number(m[1]);
}

async function call(base: string, token: string, method: string, path: string): Promise<Loose> {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, text };
}

describe('guard-agent .deb, in a container', () => {
  let c: Container;
  let deb: string;
  let lint: Promise<string[]>;
  let gs: GuardServer | undefined;
  let daemon: ReturnType<Container['spawn']> | undefined;
  before(async () => {
    const built = await agentDeb();
    lint = lintianAsync(built);
    lint.catch(() => {}); // awaited by its test
    await copyFile(built, join(tmp, basename(built)));
    deb = `${HOST}/${basename(built)}`;
    c = await Container.start('agent-deb', { [tmp]: HOST });
  });
  after(async () => {
    daemon?.child.kill('SIGKILL');
    c?.remove();
    await gs?.close();
  });

  it('installs: /usr/bin/guard-agent runs, agent.yaml a 0600 conffile, state and logs 0750, the unit verifies', () => {
    dpkgInstall(c, deb);
    assert.ok(c.exists('/etc/systemd/system/multi-user.target.wants/guard-agent.service'), 'the unit is enabled');
    assert.equal(installed(c, 'guard-agent')?.version, VERSION);
    assert.equal(c.must(['/usr/bin/guard-agent', '--version']).trim(), VERSION);
    assert.deepEqual(conffiles(c, 'guard-agent').sort(), ['/etc/guard/agent.yaml', '/etc/logrotate.d/guard-agent']);
    // It may hold proxy credentials: root's alone (the daemon runs as root).
    assert.deepEqual(c.stat('/etc/guard/agent.yaml'), { mode: 0o600, user: 'root', group: 'root' });
    assert.equal(c.stat('/var/lib/guard').mode, 0o750);
    assert.equal(c.stat('/var/log/guard').mode, 0o750);
    assert.equal(c.stat('/usr/bin/guard-agent').mode, 0o755);
    if (AGENT_EXEC_PROBE.built())
      assert.deepEqual(c.stat('/usr/lib/guard-agent/guard-exec-probe'), { mode: 0o755, user: 'root', group: 'root' });
    verifyUnit(c, '/lib/systemd/system/guard-agent.service');
    const score = exposure(c, '/lib/systemd/system/guard-agent.service');
    assert.ok(score <= 3, `systemd-analyze security: exposure ${score} (want at most 3)`);
    for (const page of [
      'guard-agent',
      'guard-agent-enroll',
      'guard-agent-support-bundle-collect',
      'guard-agent-support-bundle-upload',
      'guard-agent-daemon',
    ])
      assert.match(c.must(['man', '-w', page]), new RegExp(`/usr/share/man/man1/${page}\\.1\\.gz`));
  });

  it('the installed rule rotates the installed log and the installed agent collects it with the default config', () => {
    c.sh(`printf '%s\\n' 'time=2026-11-21T08:00:00.000Z level=INFO msg="one" api_key=k1' > /var/log/guard/agent.log`);
    c.must(['/usr/sbin/logrotate', '--force', '--state', '/tmp/logrotate.state', '/etc/logrotate.d/guard-agent']);
    c.sh(`printf '%s\\n' 'time=2026-11-21T09:00:00.000Z level=INFO msg="two"' > /var/log/guard/agent.log`);
    assert.ok(c.exists('/var/log/guard/agent.log.1.gz'));
    const r = c.exec(['/usr/bin/guard-agent', 'support-bundle', 'collect', '--out', '/tmp/bundle.tar.zst']);
    assert.equal(r.code, 0, r.out);
    assert.match(r.stdout, /^\/tmp\/bundle\.tar\.zst$/m);
    const names = c.must(['tar', '--zstd', '-tf', '/tmp/bundle.tar.zst']).split('\n').filter(Boolean);
    assert.deepEqual(names.sort(), [
      'BUNDLE-MANIFEST.json',
      'agent.log',
      'agent.log.1.gz',
      'config.redacted.json',
      'system.json',
    ]);
  });

  describe('the daemon started as the installed unit starts it (its ExecStart=), against a guard-server on the host', () => {
    let agentId: string;
    before(async () => {
      gs = await startGuardServer(join(tmp, 'server-data'));
      await writeFile(join(tmp, 'enroll-token'), gs.setup.enroll_token, { mode: 0o600 });
      // Asynchronously: the server answering it runs in this process.
      await c.mustAsync(['/usr/bin/guard-agent', 'enroll', '--url', gs.url, '--token-file', `${HOST}/enroll-token`]);
      agentId = JSON.parse(c.readFile('/var/lib/guard/enrollment.json')).agent_id;
      const argv = execStart(c.readFile('/lib/systemd/system/guard-agent.service'));
      assert.equal(argv[0], '/usr/bin/guard-agent');
      // The unit's UMask; the pid is written down so SIGTERM reaches the daemon inside.
      daemon = c.spawn(['sh', '-c', 'umask 0077; echo $$ > /run/guard-agent-test.pid; exec "$@"', 'sh', ...argv]);
    });

    it('heartbeats: GET /v1/servers shows the host online with the packaged version', async () => {
      const s = gs as GuardServer;
      let row: Loose;
      await waitFor(
        async () => {
          row = (await call(s.url, s.setup.admin_token, 'GET', '/v1/servers?limit=200')).json.servers.find(
            (r: Loose) => r.id === agentId,
          );
          return row?.last_seen_at != null;
        },
        'a heartbeat',
        30_000,
      ).catch((e) => assert.fail(`${e.message}\n${daemon?.output()}`));
      assert.equal(row.online, true);
      assert.equal(row.agent_version, VERSION);
    });

    it('fulfils a console-pushed bundle request (its job process is the installed executable)', async (t) => {
      const s = gs as GuardServer;
      const created = await call(s.url, s.setup.admin_token, 'POST', `/v1/servers/${agentId}/bundle-requests`);
      assert.equal(created.status, 201, created.text);
      let state: Loose;
      await waitFor(
        async () => {
          state = (await call(s.url, s.setup.admin_token, 'GET', `/v1/bundle-requests/${created.json.id}`)).json;
          return ['done', 'failed', 'interrupted', 'expired'].includes(state.state);
        },
        'the request to finish',
        60_000,
      ).catch((e) => assert.fail(`${e.message}\n${daemon?.output()}`));
      assert.equal(state.state, 'done', `${JSON.stringify(state)}\n${daemon?.output()}`);
      const bundle = await call(s.url, s.setup.admin_token, 'GET', `/v1/support/bundles/${state.bundle_id}`);
      assert.equal(bundle.json.manifest.trigger, 'console_push');
      assert.equal(bundle.json.manifest.request_id, created.json.id);
      // A bundle of an installed host holds what the daemon did, and each detector's state.
      const contents = bundle.json.manifest.contents as { name: string; size: number }[];
      const names = contents.map((m) => m.name);
      for (const name of ['agent.log', 'config.redacted.json', 'system.json'])
        assert.ok(names.includes(name), `${name} is not in the bundle: ${names.join(', ')}`);
      assert.ok((contents.find((m) => m.name === 'agent.log')?.size ?? 0) > 0, 'agent.log holds the daemon’s lines');
      t.diagnostic(
        `bundle of the installed agent: ${bundle.json.size} bytes; ${contents.map((m) => `${m.name} ${m.size} B`).join(', ')}`,
      );
    });

    it('writes its own log to /var/log/guard/agent.log (log_path of the packaged configuration)', async () => {
      await waitFor(
        () => /msg="guard-agent daemon started"/.test(c.exec(['cat', '/var/log/guard/agent.log']).out),
        'the daemon’s start in /var/log/guard/agent.log',
        10_000,
      ).catch((e) =>
        assert.fail(`${e.message}\n--- agent.log ---\n${c.exec(['cat', '/var/log/guard/agent.log']).out}`),
      );
    });

    it('stops on SIGTERM with exit 0', async () => {
      c.sh('kill -TERM "$(cat /run/guard-agent-test.pid)"');
      assert.equal(await daemon?.exited, 0, daemon?.output());
      daemon = undefined;
    });
  });

  it('upgrades: the operator-edited conffile (0600) and the enrolment are kept; the new version runs', async () => {
    c.sh('echo "environment: upgrade-test" >> /etc/guard/agent.yaml');
    const enrollment = c.readFile('/var/lib/guard/enrollment.json');
    const next = join(tmp, `guard-agent_${UPGRADE_VERSION}_amd64.deb`);
    await buildAgentDeb(next, UPGRADE_VERSION, { type: 'gzip', level: 1 });
    dpkgInstall(c, `${HOST}/${basename(next)}`);
    assert.equal(installed(c, 'guard-agent')?.version, UPGRADE_VERSION);
    assert.match(c.readFile('/etc/guard/agent.yaml'), /environment: upgrade-test/);
    assert.deepEqual(c.stat('/etc/guard/agent.yaml'), { mode: 0o600, user: 'root', group: 'root' });
    assert.equal(c.readFile('/var/lib/guard/enrollment.json'), enrollment);
    assert.equal(c.stat('/var/lib/guard').mode, 0o750);
    assert.equal(c.must(['/usr/bin/guard-agent', '--version']).trim(), VERSION); // the executable's own version
  });

  it('an upgrade makes a world-readable agent.yaml (as 0.1.0 shipped it) 0600, keeping its content', async () => {
    c.sh('chmod 0644 /etc/guard/agent.yaml');
    const before = c.readFile('/etc/guard/agent.yaml');
    dpkgInstall(c, `${HOST}/guard-agent_${UPGRADE_VERSION}_amd64.deb`);
    assert.equal(c.stat('/etc/guard/agent.yaml').mode, 0o600);
    assert.equal(c.readFile('/etc/guard/agent.yaml'), before);
  });

  it('purges: the program, its configuration, state, logs and unit are gone', () => {
    c.must(['dpkg', '--purge', 'guard-agent']);
    assert.equal(installed(c, 'guard-agent'), undefined);
    for (const p of [
      '/usr/bin/guard-agent',
      '/usr/lib/guard-agent',
      '/etc/guard/agent.yaml',
      '/etc/logrotate.d/guard-agent',
      '/var/lib/guard',
      '/var/log/guard',
      '/lib/systemd/system/guard-agent.service',
      '/usr/share/doc/guard-agent',
    ])
      assert.ok(!c.exists(p), `${p} is left after purge`);
    assert.deepEqual(enablementLeft(c, 'guard-agent.service'), []);
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

/** A command as the guard user (setpriv execs: signals reach the program itself). */
function asGuard(args: string[]): string[] {
  return ['setpriv', '--reuid=guard', '--regid=guard', '--init-groups', '--', ...args];
}

describe('guard-server .deb, in a container', () => {
  let c: Container;
  let deb: string;
  let lint: Promise<string[]>;
  before(async () => {
    const built = await serverDeb();
    lint = lintianAsync(built);
    lint.catch(() => {}); // awaited by its test
    await copyFile(built, join(tmp, basename(built)));
    deb = `${HOST}/${basename(built)}`;
    c = await Container.start('server-deb', { [tmp]: HOST });
  });
  after(() => c?.remove());

  it('installs: the guard system user, data 0750 guard:guard, server.yaml a 0640 root:guard conffile, the unit verifies', () => {
    dpkgInstall(c, deb);
    assert.equal(installed(c, 'guard-server')?.version, VERSION);
    const [, , uid, , , home, shell] = c.must(['getent', 'passwd', 'guard']).trim().split(':');
    assert.ok(Number(uid) < 1000, `guard is a system user (uid ${uid})`);
    assert.equal(home, '/var/lib/guard-server');
    assert.equal(shell, '/usr/sbin/nologin');
    assert.deepEqual(c.stat('/var/lib/guard-server'), { mode: 0o750, user: 'guard', group: 'guard' });
    assert.deepEqual(c.stat('/etc/guard/server.yaml'), { mode: 0o640, user: 'root', group: 'guard' });
    assert.deepEqual(conffiles(c, 'guard-server'), ['/etc/guard/server.yaml']);
    verifyUnit(c, '/lib/systemd/system/guard-server.service');
    const score = exposure(c, '/lib/systemd/system/guard-server.service');
    assert.ok(score <= 2, `systemd-analyze security: exposure ${score} (want at most 2)`);
    for (const page of ['guard-server', 'guard-server-setup'])
      assert.match(c.must(['man', '-w', page]), new RegExp(`/usr/share/man/man1/${page}\\.1\\.gz`));
    assert.equal(c.must(['/usr/bin/guard-server', '--version']).trim(), `guard-server ${VERSION}`);
  });

  it('runs as guard on the packaged configuration: setup, then serve answers the API and stops on SIGTERM', async () => {
    const r = c.exec(asGuard(['/usr/bin/guard-server', 'setup', '--json']));
    assert.equal(r.code, 0, r.out);
    const setup = JSON.parse(r.stdout);
    assert.match(setup.admin_token, /^gut_/);
    assert.ok(c.exists('/var/lib/guard-server/guard.db'), 'setup wrote the packaged data directory');

    const port = await freePort();
    const serve = asGuard(['/usr/bin/guard-server', 'serve', '--listen', `127.0.0.1:${port}`, '--metrics-listen', '']);
    const server = c.spawn(['sh', '-c', 'echo $$ > /run/guard-server-test.pid; exec "$@"', 'sh', ...serve]);
    try {
      const url = `http://127.0.0.1:${port}`;
      let ready = false;
      for (let i = 0; i < 300 && !ready; i++) {
        ready = await fetch(`${url}/readyz`).then(
          (res) => res.ok,
          () => false,
        );
        if (!ready) await new Promise((ok) => setTimeout(ok, 100));
      }
      assert.ok(ready, `guard-server did not become ready:\n${server.output()}`);
      const servers = await fetch(`${url}/v1/servers`, { headers: { authorization: `Bearer ${setup.admin_token}` } });
      assert.equal(servers.status, 200);
      const console = await fetch(`${url}/console/`);
      // 200 with the console package in the checkout; otherwise the "console not built" page.
      assert.ok([200, 503].includes(console.status), `GET /console/ answered ${console.status}`);
    } finally {
      c.exec(['sh', '-c', 'kill -TERM "$(cat /run/guard-server-test.pid)"']);
    }
    assert.equal(await server.exited, 0, server.output());
  });

  it('upgrades: the edited conffile, the data and the user are kept', async () => {
    c.sh("sed -i 's/^log_level: info$/log_level: warn/' /etc/guard/server.yaml");
    assert.match(c.readFile('/etc/guard/server.yaml'), /^log_level: warn$/m);
    const next = join(tmp, `guard-server_${UPGRADE_VERSION}_amd64.deb`);
    await buildServerDeb(next, UPGRADE_VERSION, { type: 'gzip', level: 1 });
    dpkgInstall(c, `${HOST}/${basename(next)}`);
    assert.equal(installed(c, 'guard-server')?.version, UPGRADE_VERSION);
    assert.match(c.readFile('/etc/guard/server.yaml'), /^log_level: warn$/m);
    assert.equal(c.stat('/etc/guard/server.yaml').mode, 0o640);
    assert.ok(c.exists('/var/lib/guard-server/guard.db'));
    assert.equal(c.exec(['getent', 'passwd', 'guard']).code, 0);
  });

  it('purges: the program, configuration and data are gone', () => {
    c.must(['dpkg', '--purge', 'guard-server']);
    assert.equal(installed(c, 'guard-server'), undefined);
    for (const p of [
      '/usr/bin/guard-server',
      '/usr/lib/guard-server',
      '/etc/guard/server.yaml',
      '/var/lib/guard-server',
      '/lib/systemd/system/guard-server.service',
    ])
      assert.ok(!c.exists(p), `${p} is left after purge`);
    assert.deepEqual(enablementLeft(c, 'guard-server.service'), []);
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
