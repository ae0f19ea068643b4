// Console-pushed bundles on the service (DESIGN §4 contract — bundle requests), against the
// real server on loopback with a clock the test moves: who may ask (a tenant's admins; support
// staff only when the tenant allows it: 403 and an audit entry otherwise), the contract's
// answers, one open request per server, the agent's side (heartbeat, long poll woken by a new
// request, acknowledgement, reports in order and idempotent), and expiry when no agent takes it.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  addUser,
  api,
  type EnrolledAgent,
  enrollAgent,
  isErrorShape,
  type Loose,
  setupTenant,
  startTestServer,
  type TestServer,
  uploadBundle,
  validManifest,
  waitFor,
} from './harness.ts';

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

const HOUR = 3600_000;

let server: TestServer;
let base: string;
let setup: Awaited<ReturnType<typeof setupTenant>>;
let other: Awaited<ReturnType<typeof setupTenant>>;
let support: string;
let member: string;

before(async () => {
  server = await startTestServer();
  base = server.url;
  setup = await setupTenant(server);
  other = await setupTenant(server);
  support = server.supportToken as string;
  member = await addUser(server, setup.tenant_id, 'member');
});
after(() => server.cleanup());

const ask = (serverId: string, token = setup.admin_token) =>
  api(base, 'POST', `/v1/servers/${serverId}/bundle-requests`, { token });
const show = (id: string, token = setup.admin_token) => api(base, 'GET', `/v1/bundle-requests/${id}`, { token });
const poll = (a: EnrolledAgent, wait = 0) => api(base, 'GET', `/v1/agent/commands?wait=${wait}`, { token: a.api_key });
const ack = (a: EnrolledAgent, id: string) => api(base, 'POST', `/v1/agent/commands/${id}/ack`, { token: a.api_key });
const report = (a: EnrolledAgent, id: string, body: unknown) =>
  api(base, 'POST', `/v1/agent/commands/${id}/report`, { token: a.api_key, body });
const auditActions = async (tenantId: string) => {
  const res = await api(base, 'GET', `/v1/audit?tenant_id=${tenantId}`, { token: support });
  assert.equal(res.status, 200, res.text);
  return (res.json.entries as Loose[]).map((e) => `${e.action} ${e.target} ${e.actor_role}`);
};

/** Ends whatever request the agent has open, so the next test can ask again. */
async function finishOpen(a: EnrolledAgent): Promise<void> {
  const res = await poll(a);
  for (const c of res.json.commands as Loose[]) await report(a, c.id, { state: 'interrupted', reason: 'test cleanup' });
}

describe('who may ask a server for a bundle', () => {
  let agent: EnrolledAgent;
  before(async () => {
    agent = await enrollAgent(base, setup.enroll_token, { hostname: 'web-7.example' });
  });
  beforeEach(() => finishOpen(agent));

  it("a tenant's admin: 201 with the contract fields, state queued, expiring after the default hour", async () => {
    const res = await ask(agent.agent_id);
    assert.equal(res.status, 201, res.text);
    const r = res.json;
    assert.match(r.id, /^brq_/);
    assert.equal(r.server_id, agent.agent_id);
    assert.equal(r.state, 'queued');
    assert.equal(r.created_at, server.clock.now().toISOString());
    assert.equal(Date.parse(r.expires_at) - Date.parse(r.created_at), HOUR);
    assert.equal(r.hostname, 'web-7.example');
    assert.equal(r.requested_by_role, 'admin');
    assert.equal(r.bundle_id, undefined);
    assert.equal(r.error, undefined);
    assert.deepEqual((await show(r.id)).json, r, 'GET answers the same');
    assert.ok((await auditActions(setup.tenant_id)).includes(`bundle_request.create ${r.id} admin`));
  });

  it('a member may read requests but not make one (403)', async () => {
    assertError(await ask(agent.agent_id, member), 403, 'forbidden');
    const res = await api(base, 'GET', `/v1/bundle-requests?server_id=${agent.agent_id}`, { token: member });
    assert.equal(res.status, 200, res.text);
    assert.ok(res.json.requests.length >= 1);
  });

  it("another tenant's admin: the server is not found (404), and its requests neither", async () => {
    assertError(await ask(agent.agent_id, other.admin_token), 404, 'not_found');
    const mine = await ask(agent.agent_id);
    assertError(await show(mine.json.id, other.admin_token), 404, 'not_found');
  });

  it('one open request per server: a second is 409 request_active, naming the first', async () => {
    const first = await ask(agent.agent_id);
    assert.equal(first.status, 201, first.text);
    const second = await ask(agent.agent_id);
    assertError(second, 409, 'request_active');
    assert.match(second.json.error.message, new RegExp(first.json.id));
  });

  it('support staff: 403 support_collection_not_allowed until the tenant allows it, each refusal audited', async () => {
    const refused = await ask(agent.agent_id, support);
    assertError(refused, 403, 'support_collection_not_allowed');
    assert.ok((await auditActions(setup.tenant_id)).includes(`bundle_request.denied ${agent.agent_id} support`));
    const open = await api(base, 'GET', `/v1/bundle-requests?server_id=${agent.agent_id}&state=queued`, {
      token: support,
    });
    assert.deepEqual(open.json.requests, [], 'nothing was created');

    // Only the tenant's admin changes the setting; the change is audited.
    assertError(
      await api(base, 'PATCH', '/v1/tenant/settings', { token: member, body: { allow_support_collection: true } }),
      403,
      'forbidden',
    );
    assertError(
      await api(base, 'PATCH', '/v1/tenant/settings', { token: support, body: { allow_support_collection: true } }),
      403,
      'forbidden',
    );
    const on = await api(base, 'PATCH', '/v1/tenant/settings', {
      token: setup.admin_token,
      body: { allow_support_collection: true },
    });
    assert.equal(on.json.allow_support_collection, true);
    assert.ok((await auditActions(setup.tenant_id)).includes('tenant.settings allow_support_collection=true admin'));
    const read = await api(base, 'GET', `/v1/tenant/settings?tenant_id=${setup.tenant_id}`, { token: support });
    assert.equal(read.json.allow_support_collection, true);

    const allowed = await ask(agent.agent_id, support);
    assert.equal(allowed.status, 201, allowed.text);
    assert.equal(allowed.json.requested_by_role, 'support');
    assert.ok((await auditActions(setup.tenant_id)).includes(`bundle_request.create ${allowed.json.id} support`));

    // Turned off again: refused again.
    await finishOpen(agent);
    await api(base, 'PATCH', '/v1/tenant/settings', {
      token: setup.admin_token,
      body: { allow_support_collection: false },
    });
    assertError(await ask(agent.agent_id, support), 403, 'support_collection_not_allowed');
  });

  it("the other tenant's setting is its own: support is refused there", async () => {
    const theirs = await enrollAgent(base, other.enroll_token);
    assertError(await ask(theirs.agent_id, support), 403, 'support_collection_not_allowed');
  });

  it('a revoked server cannot be asked (409 server_revoked)', async () => {
    const gone = await enrollAgent(base, setup.enroll_token);
    await api(base, 'POST', `/v1/agents/${gone.agent_id}/revoke`, { token: setup.admin_token });
    assertError(await ask(gone.agent_id), 409, 'server_revoked');
  });
});

describe("the agent's side", () => {
  let agent: EnrolledAgent;
  before(async () => {
    agent = await enrollAgent(base, setup.enroll_token, { hostname: 'db-1.example', agent_version: '0.1.0' });
  });
  beforeEach(() => finishOpen(agent));

  it('a poll hands out the command (delivered) and again until it is acknowledged; then it no longer expires', async () => {
    const r = (await ask(agent.agent_id)).json;
    const first = await poll(agent);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.json.commands, [
      {
        id: r.id,
        type: 'support_bundle',
        request_id: r.id,
        state: 'delivered',
        acknowledged: false,
        created_at: r.created_at,
        expires_at: r.expires_at,
      },
    ]);
    const shown = (await show(r.id)).json;
    assert.equal(shown.state, 'delivered');
    assert.equal(shown.delivered_at, server.clock.now().toISOString());
    assert.equal((await poll(agent)).json.commands.length, 1, 'handed out again: the first answer may have been lost');
    const acked = await ack(agent, r.id);
    assert.deepEqual(acked.json, { id: r.id, state: 'delivered' });
    assert.deepEqual((await ack(agent, r.id)).json, { id: r.id, state: 'delivered' }, 'a second ack is harmless');
    server.clock.advance(2 * HOUR);
    const after = (await show(r.id)).json;
    assert.equal(after.state, 'delivered', 'acknowledged: the agent owns it, it does not expire');
    assert.notEqual(after.acknowledged_at, null);
  });

  it('reports move the request forward with a time per state; a repeat is accepted; going back is 409', async () => {
    const r = (await ask(agent.agent_id)).json;
    await poll(agent);
    await ack(agent, r.id);
    assert.deepEqual((await report(agent, r.id, { state: 'collecting' })).json, { id: r.id, state: 'collecting' });
    server.clock.advance(1000);
    assert.equal((await report(agent, r.id, { state: 'uploading' })).json.state, 'uploading');
    assert.equal((await report(agent, r.id, { state: 'uploading' })).status, 200, 'the same report again');
    assertError(await report(agent, r.id, { state: 'collecting' }), 409, 'invalid_transition');
    const shown = (await show(r.id)).json;
    assert.equal(shown.state, 'uploading');
    assert.ok(shown.collecting_at < shown.uploading_at);
    // The done report names a bundle this agent registered for this request.
    const bundle = await uploadBundle(base, agent.api_key, {
      manifest: validManifest({ trigger: 'console_push', request_id: r.id }),
    });
    const done = await report(agent, r.id, { state: 'done', bundle_id: bundle.bundle_id });
    assert.equal(done.json.state, 'done', done.text);
    const final = (await show(r.id)).json;
    assert.equal(final.bundle_id, bundle.bundle_id);
    assert.notEqual(final.finished_at, null);
    assert.equal((await report(agent, r.id, { state: 'done', bundle_id: bundle.bundle_id })).status, 200);
    assertError(
      await report(agent, r.id, { state: 'failed', error: { code: 'x', message: 'late' } }),
      409,
      'request_finished',
    );
  });

  it('a done report naming a bundle of another request, or none, is 409 bundle_mismatch', async () => {
    const r = (await ask(agent.agent_id)).json;
    await ack(agent, r.id);
    const cli = await uploadBundle(base, agent.api_key); // trigger cli, no request_id
    assertError(await report(agent, r.id, { state: 'done', bundle_id: cli.bundle_id }), 409, 'bundle_mismatch');
    assertError(await report(agent, r.id, { state: 'done', bundle_id: 'bdl_nope' }), 409, 'bundle_mismatch');
    assert.equal((await show(r.id)).json.state, 'delivered');
  });

  it('a failure is shown with its error {code, message} and the step that failed', async () => {
    const r = (await ask(agent.agent_id)).json;
    await ack(agent, r.id);
    await report(agent, r.id, { state: 'uploading' });
    const error = { code: 'server', message: 'presign failed: HTTP 403 quota_exceeded: no room' };
    assert.equal((await report(agent, r.id, { state: 'failed', error, step: 'presign' })).json.state, 'failed');
    const shown = (await show(r.id)).json;
    assert.deepEqual(shown.error, error);
    assert.equal(shown.step, 'presign');
    assert.equal(shown.reason, error.message);
    assert.equal(shown.bundle_id, undefined);
  });

  it("an agent sees only its own commands: another agent's request is 404", async () => {
    const r = (await ask(agent.agent_id)).json;
    const stranger = await enrollAgent(base, setup.enroll_token);
    assert.deepEqual((await poll(stranger)).json.commands, []);
    assertError(await ack(stranger, r.id), 404, 'not_found');
    assertError(await report(stranger, r.id, { state: 'collecting' }), 404, 'not_found');
  });

  it('people cannot call the agent routes, agents cannot call the people routes', async () => {
    assertError(await api(base, 'GET', '/v1/agent/commands', { token: setup.admin_token }), 403, 'forbidden');
    assertError(await ask(agent.agent_id, agent.api_key), 403, 'forbidden');
  });

  it('a held poll answers as soon as a request is created for its agent', async () => {
    const started = Date.now();
    const held = poll(agent, 20);
    await waitFor(() => server.deps.commands.held > 0, 'the poll to be held');
    const r = (await ask(agent.agent_id)).json;
    const res = await held;
    assert.equal(res.json.commands[0]?.id, r.id);
    // Well before its 20 s wait, whatever the load.
    assert.ok(Date.now() - started < 10_000, `answered after ${Date.now() - started} ms`);
  });

  it('a held poll with nothing to do answers with no command after its wait', async () => {
    const started = Date.now();
    const res = await poll(agent, 1);
    assert.deepEqual(res.json.commands, []);
    assert.ok(Date.now() - started >= 900, 'it was held');
  });

  it('a wait beyond 30 s is refused (400)', async () => {
    assertError(await poll(agent, 31), 400, 'invalid_request');
  });

  it('the heartbeat records version, hostname and uptimes; the server is online with its open request', async () => {
    const beat = await api(base, 'POST', '/v1/agent/heartbeat', {
      token: agent.api_key,
      body: { agent_version: '0.2.0', hostname: 'db-1.renamed', uptime_seconds: 86400, agent_uptime_seconds: 5 },
    });
    assert.equal(beat.status, 200, beat.text);
    const { detection, ...timing } = beat.json;
    assert.deepEqual(timing, {
      server_time: server.clock.now().toISOString(),
      heartbeat_seconds: 60,
      poll_wait_seconds: 25,
    });
    assert.equal(Object.keys(detection.signal_types).length, 7, 'the detection policy rides along');
    const r = (await ask(agent.agent_id)).json;
    const list = await api(base, 'GET', '/v1/servers', { token: member });
    const row = (list.json.servers as Loose[]).find((s) => s.id === agent.agent_id);
    assert.equal(row.agent_version, '0.2.0');
    assert.equal(row.hostname, 'db-1.renamed');
    assert.equal(row.uptime_seconds, 86400);
    assert.equal(row.agent_uptime_seconds, 5);
    assert.equal(row.last_heartbeat_at, server.clock.now().toISOString());
    assert.equal(row.online, true);
    assert.deepEqual(row.active_request, { id: r.id, state: 'queued', created_at: r.created_at });
    server.clock.advance(6 * 60_000);
    const later = (await api(base, 'GET', '/v1/servers', { token: member })).json.servers as Loose[];
    assert.equal(later.find((s) => s.id === agent.agent_id).online, false, 'no heartbeat for 6 minutes');
  });

  it('a heartbeat that is not the contract shape is refused (400)', async () => {
    const res = await api(base, 'POST', '/v1/agent/heartbeat', {
      token: agent.api_key,
      body: { agent_version: '', hostname: 'x', uptime_seconds: -1 },
    });
    assertError(res, 400, 'invalid_request');
  });

  it('support staff list every tenant’s servers, or one tenant’s', async () => {
    const all = (await api(base, 'GET', '/v1/servers?limit=200', { token: support })).json.servers as Loose[];
    const tenants = new Set(all.map((s) => s.tenant_id));
    assert.ok(tenants.has(setup.tenant_id) && tenants.has(other.tenant_id));
    const one = (await api(base, 'GET', `/v1/servers?tenant_id=${other.tenant_id}`, { token: support })).json
      .servers as Loose[];
    assert.ok(one.length > 0 && one.every((s) => s.tenant_id === other.tenant_id));
  });
});

describe('expiry: the agent never takes the request', () => {
  let agent: EnrolledAgent;
  before(async () => {
    agent = await enrollAgent(base, setup.enroll_token);
  });

  it('after an hour the request is expired, with the time and the reason; its agent is told 409', async () => {
    const r = (await ask(agent.agent_id)).json;
    server.clock.advance(HOUR - 1);
    assert.equal((await show(r.id)).json.state, 'queued');
    server.clock.advance(1);
    const shown = (await show(r.id)).json;
    assert.equal(shown.state, 'expired');
    assert.equal(shown.finished_at, r.expires_at);
    assert.match(shown.reason, /did not take the request before it expired.*guard-agent daemon/);
    assert.deepEqual((await poll(agent)).json.commands, [], 'an expired request is no command');
    assertError(await ack(agent, r.id), 409, 'request_expired');
    assertError(await report(agent, r.id, { state: 'collecting' }), 409, 'request_expired');
    const row = ((await api(base, 'GET', '/v1/servers', { token: setup.admin_token })).json.servers as Loose[]).find(
      (s) => s.id === agent.agent_id,
    );
    assert.equal(row.active_request, null);
    assert.equal((await ask(agent.agent_id)).status, 201, 'a new request may be made');
  });

  it('a request handed out but never acknowledged expires too', async () => {
    await finishOpen(agent);
    const r = (await ask(agent.agent_id)).json;
    await poll(agent);
    server.clock.advance(HOUR);
    const list = await api(base, 'GET', `/v1/bundle-requests?server_id=${agent.agent_id}&state=expired`, {
      token: setup.admin_token,
    });
    assert.ok((list.json.requests as Loose[]).some((x) => x.id === r.id && x.delivered_at !== null));
  });

  it('--bundle-request-ttl sets the expiry', async () => {
    const s = await startTestServer({ flags: { 'bundle-request-ttl': '120' } });
    try {
      const t = await setupTenant(s);
      const a = await enrollAgent(s.url, t.enroll_token);
      const r = await api(s.url, 'POST', `/v1/servers/${a.agent_id}/bundle-requests`, { token: t.admin_token });
      assert.equal(Date.parse(r.json.expires_at) - Date.parse(r.json.created_at), 120_000);
    } finally {
      await s.cleanup();
    }
  });
});

describe('shutdown', () => {
  it('a held poll does not hold the server: it answers at once when the server stops', async () => {
    const s = await startTestServer();
    try {
      const t = await setupTenant(s);
      const a = await enrollAgent(s.url, t.enroll_token);
      const held = fetch(`${s.url}/v1/agent/commands?wait=30`, { headers: { authorization: `Bearer ${a.api_key}` } });
      await waitFor(() => s.deps.commands.held > 0, 'the poll to be held');
      const started = Date.now();
      await s.running.close();
      const res = await held;
      assert.equal(res.status, 200);
      assert.deepEqual(((await res.json()) as Loose).commands, []);
      // Well before its 30 s wait, whatever the load.
      assert.ok(Date.now() - started < 15_000, `stopping took ${Date.now() - started} ms`);
    } finally {
      await s.cleanup().catch(() => {});
    }
  });
});
