// Intake limits against the real server on loopback: timeouts of slow and stalled peers (real
// TCP sockets that stop mid-request), caps on concurrent presigned PUTs, the per-tenant quota
// of stored bundle bytes, and /metrics on its own listener (docs/guard-server.md, "Limits" and
// "Metrics"; DESIGN §4: errors are {"error": {"code", "message"}}, the agent retries 429).
//
// Timeouts are set to 1 s here; every wait has a bound far above it, and nothing asserts how
// fast a thing happened, only that it happened within the test's bound.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ConfigError, loadServerConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import {
  api,
  type EnrolledAgent,
  enrollAgent,
  freePort,
  isErrorShape,
  type Loose,
  MiB,
  makeTempDir,
  objectExists,
  PRESIGN_TTL_MS,
  parseRawResponse,
  partialFiles,
  presign,
  putObject,
  rawConnection,
  register,
  SERVER_BIN,
  setupCli,
  setupTenant,
  sha256Hex,
  spawnServer,
  startTestServer,
  stopSpawned,
  type TestServer,
  waitFor,
} from './harness.ts';

const execFileP = promisify(execFile);
const GiB = 1024 * MiB;
/** How long a test waits for a 1 s timeout to act: generous, for a loaded 2-core machine. */
const BOUND_MS = 15_000;

function assertError(res: { status: number | undefined; json: Loose; text?: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text ?? JSON.stringify(res.json)}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text ?? JSON.stringify(res.json)}`);
  assert.equal(res.json.error.code, code, res.text ?? JSON.stringify(res.json));
}

interface Slot {
  bytes: Buffer;
  sha256: string;
  url: string;
  object_key: string;
}

async function newSlot(server: TestServer, apiKey: string, size = 256 * 1024): Promise<Slot> {
  const bytes = randomBytes(size);
  const sha256 = sha256Hex(bytes);
  const res = await presign(server.url, apiKey, { size, sha256 });
  assert.equal(res.status, 200, res.text);
  return { bytes, sha256, ...res.json };
}

async function uploadState(server: TestServer, objectKey: string): Promise<string | undefined> {
  const row = await server.deps.db
    .selectFrom('uploads')
    .select('state')
    .where('object_key', '=', objectKey)
    .executeTakeFirst();
  return row?.state;
}

/** The request line and headers of a presigned PUT of `size` bytes, as a client sends them. */
function putHead(url: string, size: number): string {
  const u = new URL(url);
  return (
    `PUT ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\n` +
    `Content-Type: application/octet-stream\r\nContent-Length: ${size}\r\n\r\n`
  );
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

// ---------------------------------------------------------------------------------------

describe('timeouts of slow and stalled requests', () => {
  let server: TestServer;
  let agent: EnrolledAgent;
  before(async () => {
    server = await startTestServer({
      flags: { 'header-timeout': '1', 'request-timeout': '1', 'upload-idle-timeout': '1', 'keep-alive-timeout': '1' },
    });
    agent = await enrollAgent(server.url, (await setupTenant(server)).enroll_token);
  });
  after(() => server.cleanup());

  it('a JSON body that stops half way is answered 408 request_timeout and the connection closed', async () => {
    // The reproduction: no credentials, Content-Length 100, 5 bytes, then nothing.
    const conn = await rawConnection(server.url);
    try {
      conn.socket.write(
        'POST /v1/agents/enroll HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          'Content-Length: 100\r\n\r\n{"tok',
      );
      await conn.closedWithin(BOUND_MS, 'a stalled enrolment body');
      const res = parseRawResponse(conn.received());
      assertError(res, 408, 'request_timeout');
    } finally {
      conn.socket.destroy();
    }
  });

  it('a JSON body that keeps trickling but misses the request timeout is cut off too', async () => {
    const conn = await rawConnection(server.url);
    let sent = 0;
    const trickle = setInterval(() => {
      if (!conn.socket.destroyed && sent < 99) {
        conn.socket.write(' ');
        sent++;
      }
    }, 100);
    try {
      conn.socket.write(
        'POST /v1/agents/enroll HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          'Content-Length: 100\r\n\r\n',
      );
      await conn.closedWithin(BOUND_MS, 'a trickling enrolment body');
      assert.ok(sent < 99, 'the whole body was sent before the server acted');
      assertError(parseRawResponse(conn.received()), 408, 'request_timeout');
    } finally {
      clearInterval(trickle);
      conn.socket.destroy();
    }
  });

  it('a connection that stops inside its headers is answered 408 and closed', async () => {
    const conn = await rawConnection(server.url);
    try {
      conn.socket.write('POST /v1/agents/enroll HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty');
      await conn.closedWithin(BOUND_MS, 'stalled request headers');
      assertError(parseRawResponse(conn.received()), 408, 'request_timeout');
    } finally {
      conn.socket.destroy();
    }
  });

  it('a connection that never sends a byte is closed', async () => {
    const conn = await rawConnection(server.url);
    try {
      await conn.closedWithin(BOUND_MS, 'a silent connection');
    } finally {
      conn.socket.destroy();
    }
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const conn = await rawConnection(server.url);
    try {
      conn.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await waitFor(() => conn.received().includes('"status":"ok"'), 'the /healthz answer');
      assert.match(conn.received(), /^HTTP\/1\.1 200 /);
      assert.doesNotMatch(conn.received(), /connection: close/i);
      await conn.closedWithin(BOUND_MS, 'an idle keep-alive connection');
    } finally {
      conn.socket.destroy();
    }
  });

  it('a presigned PUT that stops half way is aborted after the idle timeout and its partial file removed at once', async () => {
    const slot = await newSlot(server, agent.api_key);
    const conn = await rawConnection(server.url);
    try {
      conn.socket.write(putHead(slot.url, slot.bytes.length));
      conn.socket.write(slot.bytes.subarray(0, slot.bytes.length / 2));
      await waitFor(async () => (await partialFiles(server.dataDir)).length > 0, 'the PUT to open its partial file');
      await conn.closedWithin(BOUND_MS, 'a PUT stalled half way');
      // Removed before the connection was closed, not left to the sweep at the next start.
      assert.deepEqual(await partialFiles(server.dataDir), []);
      // Nothing was answered yet, so the server still says why before it closes.
      assertError(parseRawResponse(conn.received()), 408, 'upload_idle_timeout');
    } finally {
      conn.socket.destroy();
    }
    assert.equal(await objectExists(server.dataDir, slot.object_key), false);
    assert.equal(await uploadState(server, slot.object_key), 'presigned');
    // The URL still takes the whole body afterwards.
    const retry = await putObject(slot.url, slot.bytes);
    assert.equal(retry.status, 200, retry.text);
  });

  it('a PUT that sends no body byte at all is aborted after the idle timeout', async () => {
    const slot = await newSlot(server, agent.api_key);
    const conn = await rawConnection(server.url);
    try {
      conn.socket.write(putHead(slot.url, slot.bytes.length));
      await conn.closedWithin(BOUND_MS, 'a PUT with headers and no body');
    } finally {
      conn.socket.destroy();
    }
    assert.deepEqual(await partialFiles(server.dataDir), []);
    assert.equal(await uploadState(server, slot.object_key), 'presigned');
  });

  it('a slow PUT that keeps sending is never cut off, however long it takes', async () => {
    // 64 KiB in 4 KiB pieces every 250 ms: about 4 s, longer than every timeout (1 s), but
    // never idle for one.
    const slot = await newSlot(server, agent.api_key, 64 * 1024);
    const res = await putObject(slot.url, slot.bytes, { chunkBytes: 4096, delayMs: 250 });
    assert.equal(res.status, 200, `${res.status} ${res.text} ${res.error ?? ''}`);
    const reg = await register(server.url, agent.api_key, {
      object_key: slot.object_key,
      sha256: slot.sha256,
      size: slot.bytes.length,
    });
    assert.equal(reg.status, 201, reg.text);
  });
});

// ---------------------------------------------------------------------------------------

describe('concurrent uploads', () => {
  let server: TestServer;
  let agentA: EnrolledAgent;
  let agentB: EnrolledAgent;
  before(async () => {
    server = await startTestServer({ flags: { 'max-uploads': '3', 'max-uploads-per-tenant': '2' } });
    agentA = await enrollAgent(server.url, (await setupTenant(server)).enroll_token);
    agentB = await enrollAgent(server.url, (await setupTenant(server)).enroll_token);
  });
  after(() => server.cleanup());

  /** Starts PUTs that send half their body, then wait for `gate`; resolves once all are in. */
  async function hold(slots: Slot[], gate: Promise<void>) {
    const before = (await partialFiles(server.dataDir)).length;
    const puts = slots.map((s) =>
      putObject(s.url, s.bytes, { chunkBytes: 64 * 1024, pauseAfter: s.bytes.length / 2, onPause: () => gate }),
    );
    await waitFor(
      async () => (await partialFiles(server.dataDir)).length === before + slots.length,
      `${slots.length} PUTs to be in flight`,
    );
    return puts;
  }

  function assertTooMany(res: Awaited<ReturnType<typeof putObject>>) {
    assertError(res, 429, 'too_many_uploads');
    const retryAfter = res.headers['retry-after'];
    assert.ok(
      typeof retryAfter === 'string' && /^[1-9]\d*$/.test(retryAfter),
      `Retry-After is ${retryAfter}: want seconds`,
    );
  }

  it("a PUT beyond its tenant's cap gets 429 too_many_uploads with Retry-After; other tenants still upload", async () => {
    const a1 = await newSlot(server, agentA.api_key);
    const a2 = await newSlot(server, agentA.api_key);
    const a3 = await newSlot(server, agentA.api_key);
    const b1 = await newSlot(server, agentB.api_key);
    const gate = deferred();
    let held: Promise<Awaited<ReturnType<typeof putObject>>>[] = [];
    try {
      held = await hold([a1, a2], gate.promise);
      assertTooMany(await putObject(a3.url, a3.bytes));
      assert.equal(await objectExists(server.dataDir, a3.object_key), false);
      assert.equal(await uploadState(server, a3.object_key), 'presigned');
      const b = await putObject(b1.url, b1.bytes);
      assert.equal(b.status, 200, b.text);
    } finally {
      gate.resolve();
    }
    for (const res of await Promise.all(held)) assert.equal(res.status, 200, res.text);
    // A finished PUT gave its place back: the refused one now goes through.
    const again = await putObject(a3.url, a3.bytes);
    assert.equal(again.status, 200, again.text);
  });

  it('a PUT beyond the total cap gets 429 too_many_uploads whatever its tenant', async () => {
    const a1 = await newSlot(server, agentA.api_key);
    const a2 = await newSlot(server, agentA.api_key);
    const b1 = await newSlot(server, agentB.api_key);
    const b2 = await newSlot(server, agentB.api_key);
    const gate = deferred();
    let held: Promise<Awaited<ReturnType<typeof putObject>>>[] = [];
    try {
      held = await hold([a1, a2, b1], gate.promise);
      assertTooMany(await putObject(b2.url, b2.bytes));
    } finally {
      gate.resolve();
    }
    for (const res of await Promise.all(held)) assert.equal(res.status, 200, res.text);
    assert.equal((await putObject(b2.url, b2.bytes)).status, 200);
  });

  it('refused and aborted PUTs give their places back', async () => {
    for (let i = 0; i < 3; i++) {
      const bad = await newSlot(server, agentA.api_key);
      const wrong = Buffer.from(bad.bytes);
      wrong[0] ^= 1;
      assertError(await putObject(bad.url, wrong), 400, 'sha256_mismatch');
      const gone = await newSlot(server, agentA.api_key);
      // Aborted once the server holds it: its partial file (a new name) is open.
      const before = new Set(await partialFiles(server.dataDir));
      const res = await putObject(gone.url, gone.bytes, {
        abortAfter: gone.bytes.length / 2,
        beforeAbort: () =>
          waitFor(
            async () => (await partialFiles(server.dataDir)).some((name) => !before.has(name)),
            'the PUT to open its partial file',
          ),
      });
      assert.equal(res.status, undefined);
    }
    await waitFor(async () => (await partialFiles(server.dataDir)).length === 0, 'aborted PUTs to be cleaned up');
    const slots = [await newSlot(server, agentA.api_key), await newSlot(server, agentA.api_key)];
    const gate = deferred();
    let held: Promise<Awaited<ReturnType<typeof putObject>>>[] = [];
    try {
      held = await hold(slots, gate.promise);
    } finally {
      gate.resolve();
    }
    for (const res of await Promise.all(held)) assert.equal(res.status, 200, res.text);
  });
});

// ---------------------------------------------------------------------------------------

describe('tenant quota of stored bundle bytes', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ flags: { 'tenant-quota-bytes': '10000' } });
  });
  after(() => server.cleanup());

  async function newAgent(): Promise<EnrolledAgent> {
    return enrollAgent(server.url, (await setupTenant(server)).enroll_token);
  }
  const ask = (agent: EnrolledAgent, size: number) =>
    presign(server.url, agent.api_key, { size, sha256: sha256Hex(String(size)) });

  it('presign is refused with 403 quota_exceeded once registered bundles and open reservations would pass it', async () => {
    const agent = await newAgent();
    const bytes = randomBytes(6000);
    const p = await presign(server.url, agent.api_key, { size: bytes.length, sha256: sha256Hex(bytes) });
    assert.equal(p.status, 200, p.text);
    assert.equal((await putObject(p.json.url, bytes)).status, 200);
    const reg = await register(server.url, agent.api_key, {
      object_key: p.json.object_key,
      sha256: sha256Hex(bytes),
      size: bytes.length,
    });
    assert.equal(reg.status, 201, reg.text);

    const over = await ask(agent, 4001);
    assertError(over, 403, 'quota_exceeded');
    assert.match(over.json.error.message, /6000 of .*10000/, over.json.error.message);
    const exact = await ask(agent, 4000); // reaches the quota exactly
    assert.equal(exact.status, 200, exact.text);
    assertError(await ask(agent, 1), 403, 'quota_exceeded');
    // Another tenant has a quota of its own.
    assert.equal((await ask(await newAgent(), 10000)).status, 200);
  });

  it('a reservation counts until its URL expires, then no longer', async () => {
    const agent = await newAgent();
    assert.equal((await ask(agent, 7000)).status, 200);
    assertError(await ask(agent, 7000), 403, 'quota_exceeded');
    server.clock.advance(PRESIGN_TTL_MS + 1000);
    assert.equal((await ask(agent, 7000)).status, 200);
  });

  it('an uploaded but unregistered object counts after its URL expired', async () => {
    const agent = await newAgent();
    const bytes = randomBytes(7000);
    const p = await presign(server.url, agent.api_key, { size: bytes.length, sha256: sha256Hex(bytes) });
    assert.equal((await putObject(p.json.url, bytes)).status, 200);
    server.clock.advance(PRESIGN_TTL_MS + 1000);
    assertError(await ask(agent, 7000), 403, 'quota_exceeded');
  });

  it('parallel presigns cannot overshoot the quota', async () => {
    const agent = await newAgent();
    const answers = await Promise.all(Array.from({ length: 8 }, () => ask(agent, 3000)));
    const granted = answers.filter((r) => r.status === 200).length;
    for (const r of answers) if (r.status !== 200) assertError(r, 403, 'quota_exceeded');
    assert.equal(granted, 3, `${granted} presigns of 3000 bytes were granted under a quota of 10000`);
  });
});

describe('default tenant quota', () => {
  it('is 10 GiB; 0 means no quota', async () => {
    const limited = await startTestServer();
    const unlimited = await startTestServer({ flags: { 'tenant-quota-bytes': '0' } });
    try {
      for (const [server, grants] of [
        [limited, 5],
        [unlimited, 8],
      ] as const) {
        const agent = await enrollAgent(server.url, (await setupTenant(server)).enroll_token);
        for (let i = 0; i < grants; i++) {
          const res = await presign(server.url, agent.api_key, { size: 2 * GiB, sha256: sha256Hex(String(i)) });
          assert.equal(res.status, 200, `presign ${i + 1}: ${res.text}`);
        }
        if (server === limited)
          assertError(
            await presign(server.url, agent.api_key, { size: 1, sha256: sha256Hex('x') }),
            403,
            'quota_exceeded',
          );
      }
    } finally {
      await limited.cleanup();
      await unlimited.cleanup();
    }
  });
});

// ---------------------------------------------------------------------------------------

describe('metrics listener', () => {
  it('/metrics is served on --metrics-listen only, not on the API listener', async () => {
    const server = await startTestServer({ flags: { 'metrics-listen': '127.0.0.1:0' } });
    try {
      const metricsUrl = server.running.metricsUrl;
      assert.ok(metricsUrl, 'no metrics URL');
      assert.match(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      assert.notEqual(new URL(metricsUrl).port, new URL(server.url).port);
      const res = await fetch(metricsUrl);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      const text = await res.text();
      assert.match(text, /^# TYPE guard_webhook_deliveries_total counter$/m);
      // The event loop's delay: what a hostile bundle's analysis must not raise (issue 19).
      for (const figure of ['seconds', 'p99_seconds', 'max_seconds'])
        assert.match(text, new RegExp(`^guard_server_nodejs_eventloop_lag_${figure} \\d`, 'm'));
      const other = await fetch(new URL('/v1/support/bundles', metricsUrl));
      assert.equal(other.status, 404);
      const onApi = await api(server.url, 'GET', '/metrics');
      assertError(onApi, 404, 'not_found');
    } finally {
      await server.cleanup();
    }
  });

  it('an empty --metrics-listen opens no metrics listener', async () => {
    const server = await startTestServer({ flags: { 'metrics-listen': '' } });
    try {
      assert.equal(server.running.metricsUrl, undefined);
      assertError(await api(server.url, 'GET', '/metrics'), 404, 'not_found');
    } finally {
      await server.cleanup();
    }
  });

  it('a metrics address given and taken stops the start with a message naming --metrics-listen', async () => {
    const taken = net.createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as net.AddressInfo).port;
    const dataDir = await makeTempDir('metrics-busy');
    try {
      const config = loadServerConfig(
        { 'data-dir': dataDir, listen: '127.0.0.1:0', 'metrics-listen': `127.0.0.1:${port}` },
        {},
        process.cwd(),
      );
      await assert.rejects(startServer(config, { logger: false }), (error: Error) => {
        assert.match(error.message, /metrics-listen/);
        assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
        assert.match(error.message, /in use/);
        return true;
      });
    } finally {
      taken.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('the real binary exits 3 (cannot listen) naming the metrics address when it is taken', async () => {
    const taken = net.createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as net.AddressInfo).port;
    const dataDir = await makeTempDir('metrics-exit');
    try {
      const args = ['--data-dir', dataDir, '--listen', `127.0.0.1:${await freePort()}`];
      const run = await execFileP(SERVER_BIN, [...args, '--metrics-listen', `127.0.0.1:${port}`]).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => error,
      );
      assert.equal(run.code, 3, run.stderr);
      assert.match(
        run.stderr,
        new RegExp(
          `^guard-server: cannot listen on 127\\.0\\.0\\.1:${port} for /metrics \\(--metrics-listen\\): the address is already in use$`,
          'm',
        ),
      );
    } finally {
      taken.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('the default metrics address, when taken, is left out and the server still starts', async () => {
    const taken = net.createServer();
    // Taken by someone else already (another server on this host): just as good for this test.
    await new Promise<void>((resolve) => {
      taken.once('error', () => resolve());
      taken.listen(9464, '127.0.0.1', resolve);
    });
    const dataDir = await makeTempDir('metrics-default');
    try {
      const config = loadServerConfig({ 'data-dir': dataDir, listen: '127.0.0.1:0' }, {}, process.cwd());
      const running = await startServer(config, { logger: false });
      try {
        assert.equal(running.metricsUrl, undefined);
        assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
      } finally {
        await running.close();
      }
    } finally {
      if (taken.listening) taken.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('the real binary names /docs, /openapi.json, /readyz and its metrics URL in its start banner', async () => {
    const dataDir = await makeTempDir('banner');
    await setupCli(dataDir);
    const spawned = await spawnServer(dataDir, await freePort());
    try {
      await waitFor(() => /metrics:/.test(spawned.output()), 'the start banner');
      const out = spawned.output();
      for (const path of ['/docs', '/openapi.json', '/healthz', '/readyz'])
        assert.ok(out.includes(`${spawned.url}${path}`), `the banner does not name ${spawned.url}${path}:\n${out}`);
      const m = /metrics:\s+(http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(out);
      assert.ok(m, `the banner names no metrics URL:\n${out}`);
      const res = await fetch(m[1]);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /guard_webhook_queue_depth/);
      assert.equal((await fetch(`${spawned.url}/metrics`)).status, 404);
    } finally {
      await stopSpawned(spawned);
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------------------

describe('limit settings', () => {
  const load = (flags: Record<string, string>, env: Record<string, string> = {}) =>
    loadServerConfig(flags, env, process.cwd());

  it('have the documented defaults', () => {
    const c = load({});
    assert.deepEqual(c.limits, {
      headerTimeoutMs: 20_000,
      requestTimeoutMs: 30_000,
      uploadIdleTimeoutMs: 60_000,
      keepAliveTimeoutMs: 72_000,
      maxUploads: 32,
      maxUploadsPerTenant: 8,
      tenantQuotaBytes: 10 * GiB,
    });
    assert.deepEqual(c.metricsListen, { host: '127.0.0.1', port: 9464, explicit: false });
  });

  it('are read from flags, the environment and the config file like every setting', () => {
    const c = load(
      { 'upload-idle-timeout': '7', 'metrics-listen': '[::1]:9100' },
      { GUARD_SERVER_MAX_UPLOADS_PER_TENANT: '3', GUARD_SERVER_TENANT_QUOTA_BYTES: '0' },
    );
    assert.equal(c.limits.uploadIdleTimeoutMs, 7000);
    assert.equal(c.limits.maxUploadsPerTenant, 3);
    assert.equal(c.limits.tenantQuotaBytes, 0);
    assert.deepEqual(c.metricsListen, { host: '::1', port: 9100, explicit: true });
    assert.equal(load({ 'metrics-listen': '' }).metricsListen, undefined);
  });

  it('refuse a bad value with a message naming the setting', () => {
    const bad: [string, string][] = [
      ['header-timeout', '0'],
      ['request-timeout', '-1'],
      ['upload-idle-timeout', '1.5'],
      ['upload-idle-timeout', '86401'],
      ['keep-alive-timeout', 'soon'],
      ['max-uploads', '0'],
      ['max-uploads-per-tenant', ''],
      ['tenant-quota-bytes', '-5'],
      ['metrics-listen', 'localhost'],
      ['metrics-listen', '127.0.0.1:70000'],
    ];
    for (const [flag, value] of bad)
      assert.throws(
        () => load({ [flag]: value }),
        (error: Error) => error instanceof ConfigError && error.message.includes(flag),
        `--${flag} ${JSON.stringify(value)} was accepted`,
      );
  });
});
