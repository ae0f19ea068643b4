// `guard-agent daemon` as shipped: the single executable (dist/guard-agent-linux-x64, which is
// also the .deb's /usr/bin/guard-agent) run with an empty environment against the real
// guard-server on loopback. The checkout's daemon tests run bin/guard-agent, where the job
// process of a bundle request is job.ts forked on the same Node; the executable has no job.ts
// beside it and starts itself with a hidden first argument instead (job-runner.ts), so a
// console-pushed request is what shows that form works. Then detection (DESIGN §3, contract —
// detection): a sudo line appended to the auth log after the daemon is up becomes a
// `sudo_command_executed` signal.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AGENT_VERSION, makeHome } from '../../packages/agent/test/harness.ts';
import { type GuardServer, type Loose, startGuardServer, waitFor } from '../../packages/agent/test/upload-harness.ts';
import { agentExecutable } from './artefacts.ts';

let exe: string;
let tmp: string;

before(async () => {
  exe = await agentExecutable();
  tmp = await mkdtemp(join(os.tmpdir(), 'guard-sea-daemon-test-'));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function call(base: string, token: string, method: string, path: string, body?: unknown): Promise<Loose> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, text };
}

/** The executable with an empty environment (PATH finds nothing: no node to fall back on). */
function runExe(args: string[]): ReturnType<typeof spawn> {
  return spawn(exe, args, {
    cwd: tmp,
    env: { PATH: join(tmp, 'empty-path'), HOME: tmp },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

const SUDO_LINE =
  'Nov 27 10:00:00 host sudo:    alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/id\n';

describe('guard-agent daemon from the single executable against the real guard-server', () => {
  let gs: GuardServer;
  let home: Awaited<ReturnType<typeof makeHome>>;
  let authLog: string;
  let agentId: string;
  let daemon: ReturnType<typeof spawn>;
  let output = '';
  let exited: Promise<number | null>;

  before(async () => {
    await mkdir(join(tmp, 'empty-path'));
    gs = await startGuardServer(join(tmp, 'server-data'));
    authLog = join(tmp, 'auth.log');
    await writeFile(authLog, 'Nov 27 09:59:00 host sshd[1]: Server listening on 0.0.0.0 port 22.\n');
    home = await makeHome(join(tmp, 'home'), {
      log: 'time=2026-11-27T09:00:00.000Z level=INFO msg="before the daemon"\n',
      config: { detect: { auth_log: authLog, watch: [], exec: false } },
    });
    const tokenFile = join(tmp, 'enroll-token');
    await writeFile(tokenFile, gs.setup.enroll_token, { mode: 0o600 });
    const enroll = runExe(['--config', home.configPath, 'enroll', '--url', gs.url, '--token-file', tokenFile]);
    let enrollOut = '';
    enroll.stderr?.on('data', (d) => {
      enrollOut += d;
    });
    const code = await new Promise((ok) => enroll.on('close', ok));
    assert.equal(code, 0, enrollOut);
    const servers = await call(gs.url, gs.setup.admin_token, 'GET', '/v1/servers?limit=200');
    agentId = servers.json.servers[0]?.id;
    assert.ok(agentId, servers.text);

    daemon = runExe(['--config', home.configPath, 'daemon']);
    daemon.stdout?.on('data', (d) => {
      output += d;
    });
    daemon.stderr?.on('data', (d) => {
      output += d;
    });
    exited = new Promise((ok) => daemon.on('close', ok));
    await waitFor(
      async () => {
        const row = (await call(gs.url, gs.setup.admin_token, 'GET', '/v1/servers?limit=200')).json.servers.find(
          (s: Loose) => s.id === agentId,
        );
        return row?.last_seen_at != null && row.online === true;
      },
      'the daemon to heartbeat',
      20_000,
    ).catch((e) => assert.fail(`${e.message}\n${output}`));
  });
  after(async () => {
    if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
      daemon.kill('SIGTERM');
      const timer = setTimeout(() => daemon.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await gs?.close();
  });

  it('heartbeats with the executable’s version', async () => {
    const row = (await call(gs.url, gs.setup.admin_token, 'GET', '/v1/servers?limit=200')).json.servers.find(
      (s: Loose) => s.id === agentId,
    );
    assert.equal(row.agent_version, AGENT_VERSION);
    assert.equal(row.online, true);
  });

  it('fulfils a console-pushed bundle request: done, the bundle stored with trigger console_push and the request id', async () => {
    const admin = gs.setup.admin_token;
    const created = await call(gs.url, admin, 'POST', `/v1/servers/${agentId}/bundle-requests`);
    assert.equal(created.status, 201, created.text);
    const id = created.json.id;
    let state: Loose;
    await waitFor(
      async () => {
        state = (await call(gs.url, admin, 'GET', `/v1/bundle-requests/${id}`)).json;
        return ['done', 'failed', 'interrupted', 'expired'].includes(state.state);
      },
      `request ${id} to finish`,
      60_000,
    ).catch((e) => assert.fail(`${e.message}\n${output}`));
    assert.equal(state.state, 'done', `${JSON.stringify(state)}\n${output}`);
    const bundle = await call(gs.url, admin, 'GET', `/v1/support/bundles/${state.bundle_id}`);
    assert.equal(bundle.status, 200, bundle.text);
    assert.equal(bundle.json.agent_id, agentId);
    assert.equal(bundle.json.manifest.trigger, 'console_push');
    assert.equal(bundle.json.manifest.request_id, id);
    assert.equal(bundle.json.manifest.agent_version, AGENT_VERSION);
    const download = await fetch(`${gs.url}/v1/support/bundles/${state.bundle_id}/download`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    assert.equal(download.status, 200);
    assert.equal((await download.arrayBuffer()).byteLength, bundle.json.size);
    assert.deepEqual(
      await readdir(home.supportDir).catch(() => []),
      [],
      'the uploaded bundle is removed, no work dir left',
    );
  });

  it('raises sudo_command_executed for a sudo line appended to its auth log (DESIGN §3 detection)', async () => {
    await appendFile(authLog, SUDO_LINE);
    let found: Loose;
    await waitFor(
      async () => {
        const list = await call(
          gs.url,
          gs.setup.admin_token,
          'GET',
          '/v1/signals?signal_type=sudo_command_executed&limit=50',
        );
        found = (list.json?.signals as Loose[] | undefined)?.find((s) => s.signal_type === 'sudo_command_executed');
        return found !== undefined;
      },
      'a sudo_command_executed signal',
      20_000,
    ).catch((e) => assert.fail(`${e.message}\n--- daemon output ---\n${output}`));
    assert.equal(found.severity, 3, JSON.stringify(found));
    assert.equal(found.identity_name, 'alice', JSON.stringify(found));
    assert.match(found.description, /\/usr\/bin\/id/, JSON.stringify(found));
  });

  it('stops on SIGTERM with exit 0', async () => {
    daemon.kill('SIGTERM');
    const timer = setTimeout(() => daemon.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(timer);
    assert.equal(code, 0, output);
  });
});
