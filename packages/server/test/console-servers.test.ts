// The console's Servers and Support bundles pages against the real server on loopback, with a
// clock the test moves: GET /v1/servers (DESIGN §4 fields; last_seen_at written when the agent
// key authenticates, at most once a minute; online = seen in the last 5 minutes; support staff
// list every tenant's), the enrolment token's enroll_command, and the bundle list filters.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  addUser,
  api,
  type EnrolledAgent,
  enrollAgent,
  isErrorShape,
  type Loose,
  presign,
  setupTenant,
  startTestServer,
  type TestServer,
  uploadBundle,
  validManifest,
} from './harness.ts';

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

let server: TestServer;
let base: string;
let setup: Awaited<ReturnType<typeof setupTenant>>;
let member: string;

before(async () => {
  server = await startTestServer();
  base = server.url;
  setup = await setupTenant(server);
  member = await addUser(server, setup.tenant_id, 'member');
});
after(() => server.cleanup());

/** Any call with the agent key: its key authenticates, so the agent is seen. */
const agentCall = (a: EnrolledAgent) => presign(base, a.api_key, { size: 10, sha256: '0'.repeat(64) });
const servers = async (token = member) => {
  const res = await api(base, 'GET', '/v1/servers', { token });
  assert.equal(res.status, 200, res.text);
  return res.json.servers as Loose[];
};

describe('servers', () => {
  let agent: EnrolledAgent;
  before(async () => {
    agent = await enrollAgent(base, setup.enroll_token, {
      hostname: 'web-1.example',
      environment: 'production',
      agent_version: '0.3.1',
    });
  });

  it('lists the tenant’s agents with the DESIGN §4 fields; never seen means not online', async () => {
    const [s] = await servers();
    assert.deepEqual(s, {
      id: agent.agent_id,
      hostname: 'web-1.example',
      agent_version: '0.3.1',
      last_seen_at: null,
      online: false,
      tenant_id: setup.tenant_id,
      environment: 'production',
      enrolled_at: server.clock.now().toISOString(),
      revoked_at: null,
      last_heartbeat_at: null,
      uptime_seconds: null,
      agent_uptime_seconds: null,
      active_request: null,
      detectors: null,
      spool_depth: null,
      last_signal_at: null,
    });
  });

  it('an agent key that authenticates marks the agent seen, written at most once a minute', async () => {
    await agentCall(agent);
    const seenAt = server.clock.now().toISOString();
    let [s] = await servers();
    assert.equal(s.last_seen_at, seenAt);
    assert.equal(s.online, true);
    server.clock.advance(59_000);
    await agentCall(agent);
    [s] = await servers();
    assert.equal(s.last_seen_at, seenAt, 'within the minute nothing is written');
    server.clock.advance(1_000);
    await agentCall(agent);
    [s] = await servers();
    assert.equal(s.last_seen_at, server.clock.now().toISOString());
    server.clock.advance(5 * 60_000);
    [s] = await servers();
    assert.equal(s.online, false, 'not seen for 5 minutes');
  });

  it('a revoked agent is not online', async () => {
    const a2 = await enrollAgent(base, setup.enroll_token, { hostname: 'web-2.example' });
    await agentCall(a2);
    const revoked = await api(base, 'POST', `/v1/agents/${a2.agent_id}/revoke`, { token: setup.admin_token });
    assert.equal(revoked.status, 200, revoked.text);
    const s = (await servers()).find((x) => x.id === a2.agent_id);
    assert.equal(s.online, false);
    assert.ok(s.revoked_at);
  });

  it("another tenant's servers are not listed; support staff see every tenant's (or one, by tenant_id)", async () => {
    const other = await setupTenant(server);
    assert.deepEqual(await servers(other.admin_token), []);
    assert.ok(server.supportToken);
    const all = await servers(server.supportToken);
    assert.ok(all.some((s) => s.id === agent.agent_id));
    assert.deepEqual(
      (await api(base, 'GET', `/v1/servers?tenant_id=${other.tenant_id}`, { token: server.supportToken })).json.servers,
      [],
    );
  });

  it('a new enrolment token comes with the command to paste, the token on standard input', async () => {
    const res = await api(base, 'POST', '/v1/enrollment-tokens', { token: setup.admin_token, body: {} });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.enroll_command, `guard-agent enroll --url ${base} --token -`);
    assert.ok(!res.json.enroll_command.includes(res.json.token));
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });
});

describe('bundle list filters', () => {
  let a1: EnrolledAgent;
  let a2: EnrolledAgent;
  let first: string;
  let times: string[];
  before(async () => {
    a1 = await enrollAgent(base, setup.enroll_token, { hostname: 'db-1.example' });
    a2 = await enrollAgent(base, setup.enroll_token, { hostname: 'db-2.example' });
    first = (await uploadBundle(base, a1.api_key)).uploaded_at;
    server.clock.advance(60_000);
    await uploadBundle(base, a2.api_key, {
      manifest: validManifest({ trigger: 'console_push', request_id: 'br_1' }),
    });
    server.clock.advance(60_000);
    await uploadBundle(base, a2.api_key);
    times = [first, new Date(Date.parse(first) + 60_000).toISOString()];
  });

  const bundles = async (query: string, token = setup.admin_token) => {
    const res = await api(base, 'GET', `/v1/support/bundles?${query}`, { token });
    assert.equal(res.status, 200, res.text);
    return res.json.bundles as Loose[];
  };

  it('agent_id, trigger, since and until narrow the list', async () => {
    assert.deepEqual(
      (await bundles(`agent_id=${a1.agent_id}`)).map((b) => b.hostname),
      ['db-1.example'],
    );
    assert.deepEqual(
      (await bundles('trigger=console_push')).map((b) => [b.hostname, b.trigger]),
      [['db-2.example', 'console_push']],
    );
    assert.equal((await bundles(`agent_id=${a2.agent_id}&trigger=cli`)).length, 1);
    assert.equal((await bundles(`since=${encodeURIComponent(times[1])}`)).length, 2);
    assert.deepEqual(
      (await bundles(`until=${encodeURIComponent(times[1])}`)).map((b) => b.hostname),
      ['db-1.example'],
    );
    assertError(
      await api(base, 'GET', '/v1/support/bundles?trigger=cron', { token: setup.admin_token }),
      400,
      'invalid_request',
    );
  });

  it("support staff filter every tenant's bundles by tenant; an admin's tenant_id is ignored", async () => {
    assert.ok(server.supportToken);
    const other = await setupTenant(server);
    const theirs = await enrollAgent(base, other.enroll_token);
    await uploadBundle(base, theirs.api_key);
    const all = await bundles('', server.supportToken);
    assert.ok(new Set(all.map((b) => b.tenant_id)).size >= 2);
    const one = await bundles(`tenant_id=${setup.tenant_id}&trigger=console_push`, server.supportToken);
    assert.equal(one.length, 1);
    const mine = await bundles(`tenant_id=${other.tenant_id}`);
    for (const b of mine) assert.equal(b.tenant_id, setup.tenant_id);
  });
});
