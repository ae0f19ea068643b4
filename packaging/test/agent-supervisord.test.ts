// `guard-agent daemon` under supervisord (issue 23): the program the .deb ships
// (/usr/share/doc/guard-agent/examples/supervisor/guard-agent.conf, running the runit example's
// run script) installed as docs/guard-agent-daemon.md says, in a throw-away Debian 12 container
// with Debian's supervisor installed inside, against a guard-server this process runs on
// 127.0.0.1. No systemd, no journald.

import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type GuardServer, type Loose, startGuardServer, waitFor } from '../../packages/agent/test/upload-harness.ts';
import { ensureAgentDeb } from '../build/agent-deb.ts';
import { Container } from './container.ts';
import { dpkgInstall } from './dpkg.ts';
import { assertRunsAsUnit } from './supervised-agent.ts';

const HOST = '/host';
const EXAMPLES = '/usr/share/doc/guard-agent/examples';
const LOG = '/var/log/guard/supervisor.log';
const SUPERVISORD_LOG = '/var/log/supervisor/supervisord.log';

describe('guard-agent daemon under supervisord (the packaged program), in a container without systemd', () => {
  let tmp: string;
  let c: Container;
  let gs: GuardServer;
  let supervisord: ReturnType<Container['spawn']> | undefined;
  let agentId: string;

  const log = () => c.exec(['cat', LOG]).out;
  const supervisordLog = () => c.exec(['cat', SUPERVISORD_LOG]).out;
  const status = () => c.exec(['supervisorctl', 'status', 'guard-agent']).out;
  const pid = (): number | undefined => {
    const m = /RUNNING +pid (\d+)/.exec(status());
    return m ? Number(m[1]) : undefined;
  };
  const count = (text: string, re: RegExp) => text.match(new RegExp(re.source, 'g'))?.length ?? 0;
  const explain = (e: Error) =>
    assert.fail(`${e.message}\n--- ${LOG} ---\n${log()}\n--- ${SUPERVISORD_LOG} ---\n${supervisordLog()}`);
  const online = async (): Promise<Loose> => {
    const res = await fetch(`${gs.url}/v1/servers?limit=200`, {
      headers: { authorization: `Bearer ${gs.setup.admin_token}` },
    });
    return ((await res.json()).servers as Loose[]).find((r) => r.id === agentId);
  };

  before(async () => {
    tmp = await mkdtemp(join(os.tmpdir(), 'guard-supervisord-test-'));
    const built = await ensureAgentDeb('test');
    await copyFile(built, join(tmp, basename(built)));
    c = await Container.start('agent-supervisord', { [tmp]: HOST });
    dpkgInstall(c, `${HOST}/${basename(built)}`);
    // policy-rc.d: the package's own start of supervisord is not wanted here; the test starts it.
    c.sh(
      "printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d && apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends supervisor >/dev/null",
    );
    gs = await startGuardServer(join(tmp, 'server-data'));
  });
  after(async () => {
    supervisord?.child.kill('SIGKILL');
    c?.remove();
    await gs?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('installs as its header says; not enrolled, the start fails a few times and ends FATAL (no restart loop)', async () => {
    assert.equal(c.stat(`${EXAMPLES}/supervisor/guard-agent.conf`).mode, 0o644);
    const steps = c
      .readFile(`${EXAMPLES}/supervisor/guard-agent.conf`)
      .split('\n')
      .filter((l) => /^; {3}\S/.test(l))
      .map((l) => l.slice(4));
    assert.deepEqual(
      steps.map((s) => s.split(' ')[0]),
      ['install', 'cp', 'supervisorctl'],
    );
    // The third, supervisorctl update, is for a supervisord already running: this one starts after.
    c.sh(steps.slice(0, 2).join(' && '));
    supervisord = c.spawn(['supervisord', '-n', '-c', '/etc/supervisor/supervisord.conf']);
    await waitFor(() => /FATAL/.test(status()), 'guard-agent FATAL', 30_000).catch(explain);
    assert.ok(count(log(), /this host is not enrolled/) >= 2, log());
  });

  it('enrolled, `supervisorctl start` runs it: heartbeats, and it runs as the unit does', async () => {
    await writeFile(join(tmp, 'enroll-token'), gs.setup.enroll_token, { mode: 0o600 });
    await c.mustAsync(['/usr/bin/guard-agent', 'enroll', '--url', gs.url, '--token-file', `${HOST}/enroll-token`]);
    agentId = JSON.parse(c.readFile('/var/lib/guard/enrollment.json')).agent_id;
    await c.mustAsync(['supervisorctl', 'start', 'guard-agent']);
    await waitFor(async () => (await online())?.online === true, 'a heartbeat', 30_000).catch(explain);
    const p = pid();
    assert.ok(p, status());
    assertRunsAsUnit(c, p);
  });

  it('its stderr reaches stdout_logfile, and its own log is /var/log/guard/agent.log', () => {
    assert.match(log(), /level=INFO msg="guard-agent daemon started"/);
    assert.match(c.readFile('/var/log/guard/agent.log'), /msg="guard-agent daemon started"/);
  });

  it('killed with SIGKILL: supervisord starts it again, and it heartbeats again', async () => {
    const before = pid();
    const seen = (await online()).last_seen_at;
    c.must(['sh', '-c', 'kill -KILL "$1"', 'sh', String(before)]); // procps is not in the image
    await waitFor(() => (pid() ?? before) !== before, 'a new daemon process', 30_000).catch(explain);
    await waitFor(async () => (await online()).last_seen_at !== seen, 'a heartbeat of the restarted daemon', 30_000);
    assert.equal(count(log(), /msg="guard-agent daemon started"/), 2, log());
  });

  it('`supervisorctl stop`: SIGTERM, exit 0, stopped', async () => {
    await c.mustAsync(['supervisorctl', 'stop', 'guard-agent']);
    assert.match(status(), /STOPPED/);
    assert.match(log(), /msg="guard-agent daemon stopped" reason=SIGTERM/);
    assert.match(supervisordLog(), /stopped: guard-agent \(exit status 0\)/);
  });
});
