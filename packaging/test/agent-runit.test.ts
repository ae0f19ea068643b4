// `guard-agent daemon` on a host without systemd (issue 23): the runit recipe the .deb ships
// (/usr/share/doc/guard-agent/examples/runit/guard-agent/, source packaging/agent/runit/) run
// exactly as docs/guard-agent-daemon.md says, in a throw-away Debian 12 container (container.ts)
// with Debian's runit installed by apt-get inside it, against a guard-server this process runs
// on 127.0.0.1 (the container shares the host's network). No systemd, no journald: runsv
// supervises the daemon, svlogd keeps its stderr.

import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type GuardServer, type Loose, startGuardServer, waitFor } from '../../packages/agent/test/upload-harness.ts';
import { ensureAgentDeb, RUNIT_FILES } from '../build/agent-deb.ts';
import { Container } from './container.ts';
import { dpkgInstall } from './dpkg.ts';
import { assertRunsAsUnit } from './supervised-agent.ts';

const HOST = '/host';
const EXAMPLES = '/usr/share/doc/guard-agent/examples/runit/guard-agent';
const SV = '/etc/sv/guard-agent';
const SVLOG = '/var/log/guard/runit/current';

async function call(base: string, token: string, method: string, path: string): Promise<Loose> {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, text };
}

describe('guard-agent daemon under runit (the packaged recipe), in a container without systemd', () => {
  let tmp: string;
  let c: Container;
  let gs: GuardServer;
  let runsv: ReturnType<Container['spawn']> | undefined;
  let agentId: string;

  /** The daemon's pid as runsv reports it; undefined while it is not running. */
  const daemonPid = (): number | undefined => {
    const m = /^run: [^:]+: \(pid (\d+)\)/.exec(c.exec(['sv', 'status', SV]).out);
    return m ? Number(m[1]) : undefined;
  };
  const svlog = () => c.exec(['cat', SVLOG]).out;
  const count = (text: string, re: RegExp) => text.match(new RegExp(re.source, 'g'))?.length ?? 0;
  const waitLog = (re: RegExp, n: number, what: string, timeoutMs = 20_000) =>
    waitFor(() => count(svlog(), re) >= n, what, timeoutMs).catch((e) =>
      assert.fail(`${e.message}\n--- ${SVLOG} ---\n${svlog()}\n--- runsv ---\n${runsv?.output()}`),
    );
  const online = async (): Promise<Loose> =>
    (await call(gs.url, gs.setup.admin_token, 'GET', '/v1/servers?limit=200')).json.servers.find(
      (r: Loose) => r.id === agentId,
    );

  before(async () => {
    tmp = await mkdtemp(join(os.tmpdir(), 'guard-runit-test-'));
    const built = await ensureAgentDeb('test');
    await copyFile(built, join(tmp, basename(built)));
    c = await Container.start('agent-runit', { [tmp]: HOST });
    dpkgInstall(c, `${HOST}/${basename(built)}`);
    // Debian's runit, without runit-init: runsv and svlogd under this test's control.
    c.sh('apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends runit >/dev/null');
    gs = await startGuardServer(join(tmp, 'server-data'));
  });
  after(async () => {
    runsv?.child.kill('SIGKILL');
    c?.remove();
    await gs?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('the package ships the service directory, executable, and the documented copy installs it', () => {
    for (const file of RUNIT_FILES)
      assert.deepEqual(c.stat(`${EXAMPLES}/${file}`), { mode: 0o755, user: 'root', group: 'root' }, file);
    // docs/guard-agent-daemon.md, "Without systemd": the install is this copy.
    c.must(['cp', '-a', EXAMPLES, '/etc/sv/']);
    for (const file of RUNIT_FILES) assert.equal(c.stat(`${SV}/${file}`).mode, 0o755);
  });

  it('before enrolment: the run script says so, marks the service once, and the daemon is not restarted', async () => {
    runsv = c.spawn(['runsv', SV]);
    await waitLog(/this host is not enrolled/, 1, 'the not-enrolled line');
    await waitLog(/daemon ended: exit code 0/, 1, 'the finish line');
    await new Promise((ok) => setTimeout(ok, 2500)); // runsv would have started it again by now
    assert.equal(count(svlog(), /this host is not enrolled/), 1, svlog());
    assert.match(c.exec(['sv', 'status', SV]).out, /^down: \/etc\/sv\/guard-agent: \d+s, normally up; run: log:/);
  });

  it('enrolled, `sv up` starts it: heartbeats (the server sees it online)', async () => {
    await writeFile(join(tmp, 'enroll-token'), gs.setup.enroll_token, { mode: 0o600 });
    await c.mustAsync(['/usr/bin/guard-agent', 'enroll', '--url', gs.url, '--token-file', `${HOST}/enroll-token`]);
    agentId = JSON.parse(c.readFile('/var/lib/guard/enrollment.json')).agent_id;
    c.must(['sv', 'up', SV]);
    await waitFor(async () => (await online())?.online === true, 'a heartbeat', 30_000).catch((e) =>
      assert.fail(`${e.message}\n${svlog()}`),
    );
  });

  it('runs as the unit does: its command line, root with only the unit’s capabilities, no_new_privs, umask 0077, nice 10, idle I/O', () => {
    const pid = daemonPid();
    assert.ok(pid, c.exec(['sv', 'status', SV]).out);
    assertRunsAsUnit(c, pid);
  });

  it('its stderr reaches the log service’s file (svlogd), and its own log is /var/log/guard/agent.log', async () => {
    await waitLog(/level=INFO msg="guard-agent daemon started"/, 1, 'the start line in svlogd’s current');
    assert.match(c.readFile('/var/log/guard/agent.log'), /msg="guard-agent daemon started"/);
    assert.equal(c.stat('/var/log/guard/runit').mode, 0o750);
  });

  it('killed with SIGKILL: runsv starts it again at once, and it heartbeats again', async () => {
    const pid = daemonPid();
    const seen = (await online()).last_seen_at;
    c.must(['sh', '-c', 'kill -KILL "$1"', 'sh', String(pid)]); // procps is not in the image: the shell's kill
    await waitLog(/daemon ended: exit code -1, wait status 9/, 1, 'the finish line of the killed daemon');
    await waitLog(/msg="guard-agent daemon started"/, 2, 'a second start');
    const again = daemonPid();
    assert.ok(again && again !== pid, `pid ${pid} → ${again}`);
    await waitFor(async () => (await online()).last_seen_at !== seen, 'a heartbeat of the restarted daemon', 30_000);
  });

  it('`sv term`: SIGTERM stops it cleanly (exit 0), and runsv starts it again', async () => {
    const pid = daemonPid();
    c.must(['sv', 'term', SV]);
    await waitLog(/msg=stopping signal=SIGTERM/, 1, 'the stopping line');
    await waitLog(/msg="guard-agent daemon stopped" reason=SIGTERM/, 1, 'the stopped line');
    await waitLog(/daemon ended: exit code 0, wait status 0/, 2, 'a clean exit');
    await waitLog(/msg="guard-agent daemon started"/, 3, 'a third start');
    const again = daemonPid();
    assert.ok(again && again !== pid, `pid ${pid} → ${again}`);
  });

  it('a fatal error exits 1 with the reason on stderr; runsv starts it again after the 30 s the unit waits', async () => {
    c.sh(
      "cp -p /etc/guard/agent.yaml /tmp/agent.yaml.good && sed -i 's|^log_path: .*|log_path: [1]|' /etc/guard/agent.yaml",
    );
    c.must(['sv', 'term', SV]);
    await waitLog(/config key log_path must be a non-empty path/, 1, 'the config error on stderr');
    await waitLog(/daemon ended: exit code 1, wait status 0/, 1, 'exit 1');
    const failedAt = Date.now();
    c.sh('cp -p /tmp/agent.yaml.good /etc/guard/agent.yaml');
    await waitLog(/msg="guard-agent daemon started"/, 4, 'the start after the failure', 45_000);
    const waited = (Date.now() - failedAt) / 1000;
    assert.ok(waited > 20, `started again after ${waited} s: finish holds a failed daemon back 30 s`);
    assert.ok(daemonPid());
  });

  it('`sv down`: stops cleanly and stays down', async () => {
    const pid = daemonPid();
    assert.ok(pid);
    const clean = count(svlog(), /daemon ended: exit code 0, wait status 0/);
    // Not blocking this process: the daemon's last calls go to the server it runs.
    await c.mustAsync(['sv', '-w', '15', 'down', SV]);
    assert.match(c.exec(['sv', 'status', SV]).out, /^down: /);
    await waitLog(/daemon ended: exit code 0, wait status 0/, clean + 1, 'a clean exit');
    assert.ok(!c.exists(`/proc/${pid}`), `pid ${pid} is still there`);
    // No guard-agent process left (its job processes are the same executable).
    const left = c.sh(
      "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q '^/usr/bin/guard-agent ' && echo $p; done; true",
    );
    assert.equal(left.trim(), '');
    await new Promise((ok) => setTimeout(ok, 2000));
    assert.equal(daemonPid(), undefined);
  });
});
