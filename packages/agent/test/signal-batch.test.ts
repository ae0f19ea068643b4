// The detection spool sends what it holds as one batch (POST /v1/signals with a JSON array, each
// signal with its idempotency_key) to the real server on loopback: signals that waited while the
// service was away go in one request, are all stored, and leave the spool; a service that takes
// no batch (a server from before batches) gets them one at a time instead, none lost.

import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import {
  api,
  type EnrolledAgent,
  enrollAgent,
  type Loose,
  setupTenant,
  startTestServer,
  type TestServer,
} from '../../server/test/harness.ts';
import { serviceClient } from '../src/daemon/service.ts';
import { Detection, type SignalBody } from '../src/detect/index.ts';
import { createAgents, destroyAgents, realSleep } from '../src/http/deps.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<typeof setupTenant>>;
let agent: EnrolledAgent;
const dirs: string[] = [];
const agents = createAgents({});

before(async () => {
  server = await startTestServer();
  tenant = await setupTenant(server);
  agent = await enrollAgent(server.url, tenant.enroll_token, { hostname: 'web-01' });
});
after(async () => {
  destroyAgents(agents);
  await server.cleanup();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const http = {
  agents,
  userAgent: 'guard-agent/test',
  now: () => new Date(),
  sleep: realSleep,
  random: Math.random,
  notice: () => {},
};

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function storedFailedLogins(): Promise<Loose[]> {
  const res = await api(server.url, 'GET', '/v1/signals?limit=200&signal_type=ssh_login_failed', {
    token: tenant.admin_token,
  });
  assert.equal(res.status, 200, res.text);
  return res.json.signals as Loose[];
}

/** Detection over a fresh auth log, its spool sent through `client` (the service reachable once `away` is false). */
async function detection(options: { batches: boolean; fakeOldServer?: boolean }) {
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-batch-'));
  dirs.push(dir);
  const authLog = join(dir, 'auth.log');
  await writeFile(authLog, '');
  const client = serviceClient(http, { base_url: server.url, api_key: agent.api_key });
  const calls = { single: 0, batch: [] as number[] };
  const state = { away: true };
  const stop = new AbortController();
  const away = { ok: false as const, retry: true, error: 'the service is away (test)' };
  const d = new Detection({
    stateDir: join(dir, 'state'),
    config: { authLog, watch: [], exec: false, floodPerMinute: 1000 },
    log: { info: () => {}, warn: () => {}, error: () => {} },
    now: () => new Date(),
    send: async (body: SignalBody, key, signal) => {
      if (state.away) return away;
      calls.single++;
      return client.postSignal(body, key, signal);
    },
    ...(options.batches
      ? {
          sendBatch: async (items: readonly { body: SignalBody; key: string }[], signal: AbortSignal) => {
            if (state.away) return away;
            calls.batch.push(items.length);
            // A server from before batches answers an array with 400: what it would say is all this stands for.
            if (options.fakeOldServer)
              return {
                ok: false as const,
                retry: false as const,
                error: '400 invalid_request',
                batchRefused: true as const,
              };
            return client.postSignals(items, signal);
          },
        }
      : {}),
    retryDelay: () => 50,
    signal: stop.signal,
  });
  await d.start();
  return { d, authLog, calls, state, stop };
}

const failedLogin = (i: number, user: string) =>
  `Nov 28 10:00:00 web-01 sshd[${2000 + i}]: Failed password for invalid user ${user}${i} from 198.51.100.${i % 200} port ${40000 + i} ssh2\n`;

it('signals that waited while the service was away go in one batch, all stored, and leave the spool', async () => {
  const t = await detection({ batches: true });
  try {
    await appendFile(t.authLog, Array.from({ length: 12 }, (_, i) => failedLogin(i, 'batch')).join(''));
    await until(() => t.d.spoolDepth >= 12, 'twelve signals in the spool');
    t.state.away = false;
    await until(() => t.d.spoolDepth === 0, 'the spool sent');
    assert.equal(t.calls.single, 0);
    assert.ok(t.calls.batch.length >= 1 && t.calls.batch[0] >= 12, `batches: ${t.calls.batch.join()}`);
    const stored = (await storedFailedLogins()).filter((s) => /batch[0-9]/.test(`${s.identity_name} ${s.description}`));
    assert.equal(stored.length, 12);
  } finally {
    t.stop.abort();
    await t.d.stopped(); // its loops end and its store closes before the directory goes (after())
  }
});

it('a service that takes no batch gets the same signals one at a time, none lost', async () => {
  const t = await detection({ batches: true, fakeOldServer: true });
  try {
    await appendFile(t.authLog, Array.from({ length: 5 }, (_, i) => failedLogin(i, 'single')).join(''));
    await until(() => t.d.spoolDepth >= 5, 'five signals in the spool');
    t.state.away = false;
    await until(() => t.d.spoolDepth === 0, 'the spool sent');
    assert.deepEqual(t.calls.batch, [5]);
    assert.equal(t.calls.single, 5);
    const stored = (await storedFailedLogins()).filter((s) =>
      /single[0-9]/.test(`${s.identity_name} ${s.description}`),
    );
    assert.equal(stored.length, 5);
  } finally {
    t.stop.abort();
    await t.d.stopped(); // its loops end and its store closes before the directory goes (after())
  }
});

it("the client's batch: every signal taken in one POST; sent again, nothing more; one bad signal refuses the batch", async () => {
  const client = serviceClient(http, { base_url: server.url, api_key: agent.api_key });
  const body = (n: number) => ({
    signal_type: 'user_created',
    severity: 3,
    description: `client batch ${n}`,
    identity_id: '',
    identity_name: '',
  });
  const items = [1, 2, 3].map((n) => ({ body: body(n), key: `client-batch-${n}` }));
  assert.deepEqual(await client.postSignals(items, new AbortController().signal), { ok: true });
  assert.deepEqual(await client.postSignals(items, new AbortController().signal), { ok: true });
  const res = await api(server.url, 'GET', '/v1/signals?limit=200&signal_type=user_created', {
    token: tenant.admin_token,
  });
  assert.equal((res.json.signals as Loose[]).filter((s) => /client batch/.test(s.description)).length, 3);
  const refused = await client.postSignals(
    [items[0], { body: { ...body(4), severity: 9 }, key: 'client-batch-4' }],
    new AbortController().signal,
  );
  assert.equal(refused.ok, false);
  assert.ok(!refused.ok && 'batchRefused' in refused && refused.batchRefused, JSON.stringify(refused));
});
