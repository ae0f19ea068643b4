// `guard-agent daemon` end to end: the real bin/guard-agent in a child process against the real
// guard-server on loopback (in-process, real SQLite and object store). Support staff or an
// admin ask a server for a bundle; the daemon collects and uploads it (trigger console_push,
// request_id in the manifest) and reports each step; the service analyses it. Failures: the
// service away (backoff, then it carries on), the upload refused (failed, with the step and the
// reason), SIGTERM mid-collect (no partial bundle at a stable path, the request interrupted), a
// command handed out again (never collected twice), a revoked key (exit 1), and all of it
// through HTTPS_PROXY.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { POLL_WAIT_SECONDS } from '../../server/src/bundle-requests/agent/routes.ts';
import { enrolledHome, type RunningDaemon, startDaemon, stopAllDaemons } from './daemon-harness.ts';
import { AGENT_VERSION, type Home, makeHome, slogLine, TempDirs, writeBigLog } from './harness.ts';
import {
  enrollArgs,
  type GuardServer,
  type Loose,
  proxyEnv,
  runAgent,
  selfSignedCert,
  startGuardServer,
  startProxy,
  waitFor,
} from './upload-harness.ts';

const dirs = new TempDirs();
after(() => dirs.cleanup());
after(() => stopAllDaemons());

// ---------------------------------------------------------------------------------------
// People's side of the API (fetch from the test process)

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

async function requestState(base: string, token: string, id: string): Promise<Loose> {
  const res = await call(base, token, 'GET', `/v1/bundle-requests/${id}`);
  assert.equal(res.status, 200, res.text);
  return res.json;
}

async function waitForState(base: string, token: string, id: string, states: string[], timeoutMs = 60_000) {
  let last: Loose;
  await waitFor(
    async () => {
      last = await requestState(base, token, id);
      return states.includes(last.state);
    },
    `request ${id} to be ${states.join(' or ')}`,
    timeoutMs,
  );
  return last;
}

async function serverRow(base: string, token: string, agentId: string): Promise<Loose> {
  const res = await call(base, token, 'GET', '/v1/servers?limit=200');
  return (res.json.servers as Loose[]).find((s) => s.id === agentId);
}

async function supportFiles(home: Home): Promise<string[]> {
  return readdir(home.supportDir).catch(() => []);
}

async function journal(home: Home): Promise<Loose[]> {
  return JSON.parse(await readFile(join(home.stateDir, 'daemon', 'requests.json'), 'utf8')).requests;
}

/**
 * A stop that waited out a held poll would take the poll's whole wait; half of it tells a cut
 * poll from a waited one on a loaded machine, where "within seconds" may not hold.
 */
const STOPS_WITHIN_MS = (POLL_WAIT_SECONDS * 1000) / 2;

/**
 * The command polls of `home`'s agent key that the server has received and not yet answered,
 * counted by a listener of the test's on the server's own node server.
 */
async function openPolls(server: GuardServer, home: Home): Promise<() => number> {
  const { api_key } = JSON.parse(await readFile(join(home.stateDir, 'enrollment.json'), 'utf8'));
  let open = 0;
  server.server.app.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.method !== 'GET' || !req.url?.startsWith('/v1/agent/commands?')) return;
    if (req.headers.authorization !== `Bearer ${api_key}`) return;
    open++;
    res.once('close', () => open--);
  });
  return () => open;
}

/** Resolves once process `pid` has exited (gone, or a zombie nobody reaped). */
async function processGone(pid: number, what: string): Promise<void> {
  await waitFor(async () => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
    // The state is the field after the command name, which is in parentheses.
    return stat === undefined || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  }, what);
}

// ---------------------------------------------------------------------------------------

describe('guard-agent daemon against the real guard-server', () => {
  let server: GuardServer;
  let base: string;
  let admin: string;
  let support: string;
  let home: Home & { agentId: string };
  let daemon: RunningDaemon;

  before(async () => {
    server = await startGuardServer(await dirs.make('server'));
    base = server.url;
    admin = server.setup.admin_token;
    support = server.setup.support_token as string;
    home = await enrolledHome(dirs, base, server.setup.enroll_token);
    daemon = startDaemon(home);
    await daemon.waitForLog(/msg="guard-agent daemon started"/, 'the daemon to start');
  });
  after(async () => {
    await daemon?.stop();
    await server?.close();
  });

  it('heartbeats: the server is online with the version, hostname and uptimes the daemon reports', async () => {
    await waitFor(async () => (await serverRow(base, admin, home.agentId))?.last_heartbeat_at != null, 'a heartbeat');
    const row = await serverRow(base, admin, home.agentId);
    assert.equal(row.online, true);
    assert.equal(row.agent_version, AGENT_VERSION);
    assert.equal(row.hostname, os.hostname());
    assert.ok(row.uptime_seconds > 0);
    assert.ok(row.agent_uptime_seconds >= 0);
  });

  it('support staff ask (the tenant allows it): collected, uploaded, done — trigger console_push, request_id, each step timed', async () => {
    const on = await call(base, admin, 'PATCH', '/v1/tenant/settings', { allow_support_collection: true });
    assert.equal(on.status, 200, on.text);
    const created = await call(base, support, 'POST', `/v1/servers/${home.agentId}/bundle-requests`);
    assert.equal(created.status, 201, created.text);
    const id = created.json.id;
    const done = await waitForState(base, support, id, ['done', 'failed', 'interrupted']);
    assert.equal(done.state, 'done', JSON.stringify(done));
    for (const at of ['delivered_at', 'acknowledged_at', 'collecting_at', 'uploading_at', 'finished_at'])
      assert.notEqual(done[at], null, at);
    assert.ok(done.collecting_at <= done.uploading_at && done.uploading_at <= done.finished_at);
    const bundle = await call(base, support, 'GET', `/v1/support/bundles/${done.bundle_id}`);
    assert.equal(bundle.status, 200, bundle.text);
    assert.equal(bundle.json.trigger, 'console_push');
    assert.equal(bundle.json.manifest.trigger, 'console_push');
    assert.equal(bundle.json.manifest.request_id, id);
    assert.equal(bundle.json.agent_id, home.agentId);
    assert.deepEqual(await supportFiles(home), [], 'the uploaded bundle is not kept, and no work dir is left');
    // The service confirmed `done` before the daemon wrote that confirmation down: wait for it.
    let entry: Loose;
    await waitFor(async () => {
      entry = (await journal(home)).find((e) => e.id === id);
      return entry?.reported === 'done';
    }, 'the journal to record the confirmed outcome');
    assert.equal(entry.state, 'done');
    assert.match(daemon.log(), new RegExp(`msg="support bundle request done" request_id=${id}`));
    // The service analyses it: its insights point at the lines of the host's log.
    let insights: Loose;
    await waitFor(async () => {
      insights = (await call(base, support, 'GET', `/v1/support/bundles/${done.bundle_id}/insights`)).json;
      return insights.state !== 'pending';
    }, 'the insights');
    assert.equal(insights.state, 'done', JSON.stringify(insights));
    const frequent = (insights.findings as Loose[]).find((f) => f.code === 'log.frequent_error');
    assert.equal(frequent.title, '“probe detach failed” ×2');
    assert.deepEqual(frequent.evidence, [
      { member: 'agent.log', line: 2 },
      { member: 'agent.log', line: 4 },
    ]);
  });

  it('a command handed out again (the service lost the acknowledgement) is not collected twice', async () => {
    const created = await call(base, admin, 'POST', `/v1/servers/${home.agentId}/bundle-requests`);
    const id = created.json.id;
    const first = await waitForState(base, admin, id, ['done']);
    const bundles = async () =>
      (await call(base, admin, 'GET', `/v1/support/bundles?agent_id=${home.agentId}&limit=200`)).json.bundles.length;
    const count = await bundles();
    // As if the acknowledgement and every report had been lost: the service hands it out again.
    await server.server.deps.db
      .updateTable('bundle_requests')
      .set({ state: 'delivered', acknowledged_at: null, collecting_at: null, uploading_at: null, finished_at: null })
      .where('id', '=', id)
      .execute();
    server.server.deps.commands.wake(home.agentId);
    const again = await waitForState(base, admin, id, ['done', 'failed', 'interrupted'], 30_000);
    assert.equal(again.state, 'done', 'the daemon sent its recorded outcome again');
    assert.equal(again.bundle_id, first.bundle_id, 'the same bundle');
    assert.equal(await bundles(), count, 'no second bundle was made');
    assert.equal(daemon.log().split(`msg="collecting a support bundle" request_id=${id}`).length - 1, 1);
  });

  it('a member cannot ask; the audit log shows who asked', async () => {
    // Filtered by action: the reads polled above (each insights read is audited) may fill
    // more than a page, the more so on a loaded machine.
    const roles = async (action: string) => {
      const audit = await call(base, support, 'GET', `/v1/audit?tenant_id=${server.setup.tenant_id}&action=${action}`);
      assert.equal(audit.status, 200, audit.text);
      return (audit.json.entries as Loose[]).map((e) => e.actor_role);
    };
    assert.deepEqual([...new Set(await roles('bundle_request.create'))].sort(), ['admin', 'support']);
    assert.ok((await roles('tenant.settings')).includes('admin'));
  });

  it('SIGTERM while idle: the long poll is cut, the daemon exits 0 within seconds', async () => {
    // An agent of its own, so that its polls are told from the first daemon's.
    const idleHome = await enrolledHome(dirs, base, server.setup.enroll_token);
    const polls = await openPolls(server, idleHome);
    const idle = startDaemon(idleHome);
    await waitFor(() => polls() > 0, 'the second daemon’s poll to be held', 20_000);
    const stopped = await idle.stop('SIGTERM');
    assert.equal(stopped.code, 0, idle.log());
    assert.ok(stopped.ms < STOPS_WITHIN_MS, `stopping took ${stopped.ms} ms`);
    assert.match(idle.log(), /msg=stopping signal=SIGTERM[\s\S]*msg="guard-agent daemon stopped" reason=SIGTERM/);
  });
});

describe('failures', () => {
  let server: GuardServer;
  let base: string;
  let admin: string;

  before(async () => {
    // A quota no bundle fits: presign is refused (403 quota_exceeded).
    server = await startGuardServer(await dirs.make('server'), { flags: { 'tenant-quota-bytes': '1' } });
    base = server.url;
    admin = server.setup.admin_token;
  });
  after(() => server?.close());

  it('the upload is refused: failed, with the step and the service’s reason; the bundle is kept for the operator', async () => {
    const home = await enrolledHome(dirs, base, server.setup.enroll_token);
    const daemon = startDaemon(home);
    try {
      const id = (await call(base, admin, 'POST', `/v1/servers/${home.agentId}/bundle-requests`)).json.id;
      const failed = await waitForState(base, admin, id, ['failed', 'done', 'interrupted']);
      assert.equal(failed.state, 'failed');
      assert.equal(failed.step, 'presign');
      assert.equal(failed.error.code, 'server');
      assert.match(failed.error.message, /^presign failed: HTTP 403 quota_exceeded: /);
      assert.match(failed.reason, /presign failed/);
      assert.equal(failed.bundle_id, undefined);
      const kept = (await supportFiles(home)).filter((n) => n.endsWith('.tar.zst'));
      assert.equal(kept.length, 1, 'the collected bundle is kept');
      assert.match(failed.error.message, new RegExp(`the bundle is kept at .*${kept[0]}`));
    } finally {
      await daemon.stop();
    }
  });

  it('SIGTERM mid-collect: exits within seconds, no partial bundle at a stable path, the request interrupted', async () => {
    const root = await dirs.make('big');
    const home = await enrolledHome(dirs, base, server.setup.enroll_token, '');
    await writeBigLog(home.logPath, 170, `${slogLine('ERROR', 'last words')}\n`); // ~2 s of collect
    void root;
    const daemon = startDaemon(home);
    const id = (await call(base, admin, 'POST', `/v1/servers/${home.agentId}/bundle-requests`)).json.id;
    await waitForState(base, admin, id, ['collecting'], 30_000);
    const stopped = await daemon.stop('SIGTERM');
    assert.equal(stopped.code, 0, daemon.log());
    assert.ok(stopped.ms < STOPS_WITHIN_MS, `stopping took ${stopped.ms} ms`);
    const shown = await requestState(base, admin, id);
    assert.equal(shown.state, 'interrupted', JSON.stringify(shown));
    assert.match(shown.reason, /guard-agent was stopped \(SIGTERM\) while collecting/);
    assert.notEqual(shown.finished_at, null);
    const left = await supportFiles(home);
    assert.deepEqual(
      left.filter((n) => n.endsWith('.tar.zst')),
      [],
      'no bundle at a stable path',
    );
    assert.deepEqual(left, [], 'and the killed collect’s work dir is swept');
    // A restart finds nothing to redo: the request is over. The server holds a poll only when
    // it has no command for the agent, and the journal was read before the start line.
    const polls = await openPolls(server, home);
    const again = startDaemon(home);
    await again.waitForLog(/msg="guard-agent daemon started"/, 'the restart');
    await waitFor(() => polls() > 0 && server.server.deps.commands.held > 0, 'the restart’s poll to be held', 20_000);
    assert.doesNotMatch(again.log(), /collecting a support bundle/);
    await again.stop();
  });

  it('a run killed outright (SIGKILL) mid-collect: the next start reports the request interrupted', async () => {
    const home = await enrolledHome(dirs, base, server.setup.enroll_token, '');
    await writeBigLog(home.logPath, 170);
    const daemon = startDaemon(home);
    const id = (await call(base, admin, 'POST', `/v1/servers/${home.agentId}/bundle-requests`)).json.id;
    await waitForState(base, admin, id, ['collecting'], 30_000);
    // The collect runs in a child process of the daemon's (started before `collecting` is
    // reported), which ends when its daemon does.
    const children = await readFile(`/proc/${daemon.pid}/task/${daemon.pid}/children`, 'utf8');
    const jobs = children.split(' ').filter(Boolean).map(Number);
    assert.equal(jobs.length, 1, `the daemon's children: "${children}"`);
    await daemon.stop('SIGKILL');
    await processGone(jobs[0], 'the collect to end with its daemon');
    const bundles = await call(base, admin, 'GET', `/v1/support/bundles?agent_id=${home.agentId}`);
    assert.deepEqual(bundles.json.bundles, [], 'the job ended with its daemon: nothing was uploaded for nobody');
    const restarted = startDaemon(home);
    try {
      const shown = await waitForState(base, admin, id, ['interrupted', 'done'], 30_000);
      assert.equal(shown.state, 'interrupted', JSON.stringify(shown));
      assert.match(shown.reason, /guard-agent stopped while the request was collecting/);
      assert.match(restarted.log(), /the previous run did not finish is reported interrupted/);
    } finally {
      await restarted.stop();
    }
  });

  it('a revoked agent key ends the daemon: exit 1, saying to re-enrol', async () => {
    const home = await enrolledHome(dirs, base, server.setup.enroll_token);
    const revoked = await call(base, admin, 'POST', `/v1/agents/${home.agentId}/revoke`);
    assert.equal(revoked.status, 200, revoked.text);
    const daemon = startDaemon(home);
    const exit = await Promise.race([
      daemon.exited,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 20_000)),
    ]);
    assert.ok(exit, 'the daemon exited');
    assert.equal(exit.code, 1);
    assert.match(daemon.log(), /guard-agent: .*HTTP 401.*re-enroll with guard-agent enroll/);
  });

  it('a daemon that is not enrolled: exit 1 before anything else', async () => {
    const home = await makeHome(await dirs.make('unenrolled'), { log: '' });
    const daemon = startDaemon(home);
    const exit = await daemon.exited;
    assert.equal(exit.code, 1);
    assert.match(daemon.log(), /enroll/);
  });
});

/**
 * A TCP forwarder on a port of its own, standing for the network path to the service. Its mode
 * says what it does with each new connection: forward it, cut it (counted), or take it and
 * never answer (kept in `held`).
 */
async function pathTo(serviceUrl: string) {
  const target = new URL(serviceUrl);
  const state = { mode: 'forward' as 'forward' | 'cut' | 'hold', cut: 0, held: [] as net.Socket[] };
  const forwarder = net.createServer((client) => {
    client.on('error', () => {});
    if (state.mode === 'cut') {
      state.cut++;
      client.destroy();
      return;
    }
    if (state.mode === 'hold') {
      state.held.push(client);
      return;
    }
    const upstream = net.connect(Number(target.port), target.hostname);
    upstream.on('error', () => {});
    client.pipe(upstream).pipe(client);
  });
  forwarder.listen(0, '127.0.0.1');
  await once(forwarder, 'listening');
  return {
    state,
    url: `http://127.0.0.1:${(forwarder.address() as net.AddressInfo).port}`,
    close() {
      for (const socket of state.held) socket.destroy();
      forwarder.close();
    },
  };
}

describe('the service away', () => {
  it('the daemon keeps trying with backoff, says so once, and carries on when the service is back', async () => {
    const server = await startGuardServer(await dirs.make('server'));
    // The network path to the service: while the service is away it cuts every connection as
    // it comes, counting the tries; the port stays the path's, so the service comes back on the
    // same address.
    const path = await pathTo(server.url);
    const home = await enrolledHome(dirs, path.url, server.setup.enroll_token);
    // The service goes away (the enrolment's connection went with its process).
    path.state.mode = 'cut';
    const daemon = startDaemon(home);
    try {
      await daemon.waitForLog(/msg="the service cannot be reached; trying again with backoff"/, 'the outage warning');
      const admin = server.setup.admin_token;
      const id = (await call(server.url, admin, 'POST', `/v1/servers/${home.agentId}/bundle-requests`)).json.id;
      // Six tries in all (the heartbeat's and the poll's, each with its backoff) after one warning.
      await waitFor(() => path.state.cut >= 6, 'six tries of the service while it is away', 30_000);
      assert.equal(
        daemon.log().split('msg="the service cannot be reached').length - 1,
        1,
        'one warning per outage, not one per try',
      );
      // The service is back, on the same address.
      path.state.mode = 'forward';
      const done = await waitForState(server.url, admin, id, ['done', 'failed'], 90_000);
      assert.equal(done.state, 'done', JSON.stringify(done));
      assert.match(daemon.log(), /msg="the service is reachable again"/);
    } finally {
      await daemon.stop();
      path.close();
      await server.close();
    }
  });
});

describe('a service that holds its calls', () => {
  it('SIGTERM while a heartbeat is held (the connection taken, never answered): exits 0 within seconds', async () => {
    const server = await startGuardServer(await dirs.make('server'));
    const path = await pathTo(server.url);
    const home = await enrolledHome(dirs, path.url, server.setup.enroll_token);
    path.state.mode = 'hold';
    const daemon = startDaemon(home);
    try {
      // Its first calls (the heartbeat and the poll) are both held.
      await waitFor(() => path.state.held.length >= 2, 'the heartbeat and the poll to be held', 20_000);
      const stopped = await daemon.stop('SIGTERM');
      assert.equal(stopped.code, 0, daemon.log());
      assert.ok(stopped.ms < STOPS_WITHIN_MS, `stopping took ${stopped.ms} ms`);
    } finally {
      await daemon.stop();
      path.close();
      await server.close();
    }
  });
});

describe('through HTTPS_PROXY', () => {
  it('an https:// service is reached through the proxy (CONNECT), and a request is done end to end', async () => {
    const tlsDir = await dirs.make('tls');
    const tls = await selfSignedCert(tlsDir);
    // The service behind TLS: an https front that forwards to guard-server, which names the
    // front as its public URL (presigned URLs point there too).
    let frontUrl = '';
    const front = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const up = http.request(
        {
          host: '127.0.0.1',
          port: Number(new URL(backend).port),
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    front.listen(0, '127.0.0.1');
    await once(front, 'listening');
    frontUrl = `https://127.0.0.1:${(front.address() as net.AddressInfo).port}`;
    const server = await startGuardServer(await dirs.make('server'), { flags: { 'public-url': frontUrl } });
    // server.url is the public URL (the front); the front forwards to where it listens.
    const backend = `http://127.0.0.1:${(server.server.app.server.address() as net.AddressInfo).port}`;
    const proxy = await startProxy();
    const env = { ...proxyEnv({ https: proxy.url }), NODE_EXTRA_CA_CERTS: tls.certPath };
    try {
      const root = await dirs.make('proxied');
      const home = await makeHome(root, { log: `${slogLine('INFO', 'hello')}\n` });
      const tokenFile = join(root, 'token');
      await writeFile(tokenFile, server.setup.enroll_token);
      const enrolled = await runAgent(enrollArgs(home, frontUrl, tokenFile), { env });
      assert.equal(enrolled.code, 0, enrolled.stderr);
      const agentId = JSON.parse(await readFile(join(home.stateDir, 'enrollment.json'), 'utf8')).agent_id;
      const daemon = startDaemon(home, env);
      try {
        const admin = server.setup.admin_token;
        const id = (await call(backend, admin, 'POST', `/v1/servers/${agentId}/bundle-requests`)).json.id;
        const done = await waitForState(backend, admin, id, ['done', 'failed', 'interrupted']);
        assert.equal(done.state, 'done', JSON.stringify(done));
        const frontHost = new URL(frontUrl).host;
        assert.ok(proxy.tunnels.length >= 1 && proxy.tunnels.every((t) => t === frontHost), proxy.tunnels.join());
        assert.ok(proxy.bytesUp() > 0);
      } finally {
        await daemon.stop();
      }
    } finally {
      await proxy.close();
      front.close();
      await server.close();
    }
  });
});
