// The agents admin API against the real server on loopback: a tenant's admin lists the
// tenant's enrolled agents (newest first, paged like every list) and revokes an agent's API key
// (docs/guard-agent-enroll.md: "the old key stays valid until an admin revokes it"). After a
// revocation that key is refused (401) on every API call; the call is idempotent, admin-only,
// tenant-scoped (another tenant's agent is "not found") and audited.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  addUser,
  api,
  type EnrolledAgent,
  enrollAgent,
  isErrorShape,
  type Loose,
  presign,
  putObject,
  register,
  setupTenant,
  sha256Hex,
  startTestServer,
  type TestServer,
  uploadBundle,
} from './harness.ts';

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

const signal = {
  signal_type: 'sudo_command_executed',
  severity: 3,
  description: 'sudo -i',
  identity_id: 'u-1',
  identity_name: 'alice',
};

describe('agents admin API: list and revoke', () => {
  let server: TestServer;
  let adminA: string;
  let adminB: string;
  let memberA: string;
  let support: string;
  let enrollA: string;
  let agentB: EnrolledAgent;

  before(async () => {
    server = await startTestServer();
    const a = await setupTenant(server);
    const b = await setupTenant(server);
    adminA = a.admin_token;
    adminB = b.admin_token;
    enrollA = a.enroll_token;
    support = server.supportToken as string;
    memberA = await addUser(server, a.tenant_id, 'member');
    agentB = await enrollAgent(server.url, b.enroll_token, { hostname: 'b-host' });
  });
  after(() => server.cleanup());

  const list = (token: string, query = '') => api(server.url, 'GET', `/v1/agents${query}`, { token });
  const revoke = (token: string, id: string) => api(server.url, 'POST', `/v1/agents/${id}/revoke`, { token });

  it("an admin lists the tenant's agents, newest first, without any credential", async () => {
    const first = await enrollAgent(server.url, enrollA, {
      hostname: 'web-1',
      environment: 'production',
      agent_version: '0.1.0',
    });
    const enrolledAt = server.clock.now().toISOString();
    server.clock.advance(1000);
    const second = await enrollAgent(server.url, enrollA, { hostname: 'web-2' });
    const res = await list(adminA);
    assert.equal(res.status, 200, res.text);
    const ids = res.json.agents.map((x: Loose) => x.id);
    assert.ok(ids.indexOf(second.agent_id) < ids.indexOf(first.agent_id), 'not newest first');
    assert.ok(!ids.includes(agentB.agent_id), "another tenant's agent is listed");
    const row = res.json.agents.find((x: Loose) => x.id === first.agent_id);
    assert.deepEqual(row, {
      id: first.agent_id,
      hostname: 'web-1',
      environment: 'production',
      agent_version: '0.1.0',
      enrolled_at: enrolledAt,
      revoked_at: null,
    });
    assert.equal(res.json.next_before, null);
    assert.ok(!res.text.includes(first.api_key) && !res.text.includes('gak_'), 'a key is in the list');
  });

  it('the list pages with limit and next_before and never repeats or skips an agent', async () => {
    // Several agents enrolled in the same millisecond: the cursor orders them by id too.
    for (let i = 0; i < 5; i++) await enrollAgent(server.url, enrollA, { hostname: `same-ms-${i}` });
    const all = (await list(adminA, '?limit=200')).json.agents.map((x: Loose) => x.id);
    const seen: string[] = [];
    let query = '?limit=2';
    for (let pages = 0; pages < 50; pages++) {
      const page = await list(adminA, query);
      assert.equal(page.status, 200, page.text);
      assert.ok(page.json.agents.length <= 2);
      seen.push(...page.json.agents.map((x: Loose) => x.id));
      if (page.json.next_before === null) break;
      query = `?limit=2&before=${encodeURIComponent(page.json.next_before)}`;
    }
    assert.deepEqual(seen, all);
    assert.equal(new Set(seen).size, seen.length);
    assertError(await list(adminA, '?limit=0'), 400, 'invalid_request');
    assertError(await list(adminA, '?before=yesterday'), 400, 'invalid_cursor');
  });

  it('a revoked key is refused with 401 on every API call; the agent is listed as revoked', async () => {
    const victim = await enrollAgent(server.url, enrollA, { hostname: 'stolen-laptop' });
    const other = await enrollAgent(server.url, enrollA, { hostname: 'still-fine' });
    // A presign taken before the revocation, to register after it.
    const bytes = randomBytes(1024);
    const sha256 = sha256Hex(bytes);
    const slot = await presign(server.url, victim.api_key, { size: bytes.length, sha256 });
    assert.equal(slot.status, 200, slot.text);
    assert.equal((await putObject(slot.json.url, bytes)).status, 200);
    assert.equal((await api(server.url, 'POST', '/v1/signals', { token: victim.api_key, body: signal })).status, 201);

    server.clock.advance(5000);
    const revokedAt = server.clock.now().toISOString();
    const res = await revoke(adminA, victim.agent_id);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.id, victim.agent_id);
    assert.equal(res.json.hostname, 'stolen-laptop');
    assert.equal(res.json.revoked_at, revokedAt);

    const key = victim.api_key;
    const calls: [string, string, unknown][] = [
      ['POST', '/v1/support/bundle/upload-url', { filename: 'b.tar.zst', size: 10, sha256 }],
      ['POST', '/v1/signals', signal],
      ['GET', '/v1/signals', undefined],
      ['GET', '/v1/agents', undefined],
      ['GET', '/v1/support/bundles', undefined],
      ['GET', '/v1/enrollment-tokens', undefined],
      ['GET', '/v1/webhooks/endpoints', undefined],
    ];
    for (const [method, path, body] of calls)
      assertError(await api(server.url, method, path, { token: key, body }), 401, 'unauthorized');
    assertError(
      await register(server.url, key, { object_key: slot.json.object_key, sha256, size: bytes.length }),
      401,
      'unauthorized',
    );

    // The tenant's other agents are untouched.
    assert.equal((await api(server.url, 'POST', '/v1/signals', { token: other.api_key, body: signal })).status, 201);
    const row = (await list(adminA, '?limit=200')).json.agents.find((x: Loose) => x.id === victim.agent_id);
    assert.equal(row.revoked_at, revokedAt);
    assert.equal(
      (await list(adminA, '?limit=200')).json.agents.find((x: Loose) => x.id === other.agent_id).revoked_at,
      null,
    );
  });

  it('revoking again answers the same record and changes nothing (idempotent)', async () => {
    const agent = await enrollAgent(server.url, enrollA);
    const first = await revoke(adminA, agent.agent_id);
    assert.equal(first.status, 200, first.text);
    server.clock.advance(60_000);
    const again = await revoke(adminA, agent.agent_id);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.json, first.json);
    assertError(await api(server.url, 'GET', '/v1/signals', { token: agent.api_key }), 401, 'unauthorized');
  });

  it('only an admin may list or revoke: member, support staff and agent keys get 403', async () => {
    const agent = await enrollAgent(server.url, enrollA);
    for (const token of [memberA, support, agent.api_key]) {
      assertError(await list(token), 403, 'forbidden');
      assertError(await revoke(token, agent.agent_id), 403, 'forbidden');
    }
    assertError(await api(server.url, 'GET', '/v1/agents'), 401, 'unauthorized');
    assertError(await api(server.url, 'POST', `/v1/agents/${agent.agent_id}/revoke`), 401, 'unauthorized');
    // Still valid: none of the refused calls revoked it.
    assert.equal((await api(server.url, 'POST', '/v1/signals', { token: agent.api_key, body: signal })).status, 201);
  });

  it("another tenant's agent, or an unknown id, is 404 and stays valid", async () => {
    assertError(await revoke(adminA, agentB.agent_id), 404, 'not_found');
    assertError(await revoke(adminA, 'ag_doesnotexist'), 404, 'not_found');
    assert.equal((await api(server.url, 'POST', '/v1/signals', { token: agentB.api_key, body: signal })).status, 201);
    const b = await list(adminB);
    assert.deepEqual(
      b.json.agents.map((x: Loose) => [x.id, x.revoked_at]),
      [[agentB.agent_id, null]],
    );
  });

  it("a revocation is written to the audit log once, with the admin and the agent's tenant", async () => {
    const a = await setupTenant(server);
    const agent = await enrollAgent(server.url, a.enroll_token);
    assert.equal((await revoke(a.admin_token, agent.agent_id)).status, 200);
    assert.equal((await revoke(a.admin_token, agent.agent_id)).status, 200);
    const rows = await server.deps.db
      .selectFrom('audit_log')
      .innerJoin('users', 'users.id', 'audit_log.actor_id')
      .select(['audit_log.action', 'audit_log.target', 'audit_log.tenant_id', 'audit_log.actor_role', 'users.email'])
      .where('audit_log.target', '=', agent.agent_id)
      .execute();
    assert.deepEqual(
      rows.map((r) => ({ ...r })),
      [
        {
          action: 'agent.revoke',
          target: agent.agent_id,
          tenant_id: a.tenant_id,
          actor_role: 'admin',
          email: a.admin_email,
        },
      ],
    );
  });

  it("a revoked agent's bundles stay readable by the tenant", async () => {
    const agent = await enrollAgent(server.url, enrollA);
    const up = await uploadBundle(server.url, agent.api_key);
    assert.equal((await revoke(adminA, agent.agent_id)).status, 200);
    const show = await api(server.url, 'GET', `/v1/support/bundles/${up.bundle_id}`, { token: adminA });
    assert.equal(show.status, 200, show.text);
  });

  it('/openapi.json documents both routes with their response schemas', async () => {
    const doc = (await api(server.url, 'GET', '/openapi.json')).json;
    const listOp = doc.paths['/v1/agents']?.get;
    const revokeOp = doc.paths['/v1/agents/{id}/revoke']?.post;
    assert.ok(listOp, 'GET /v1/agents is not documented');
    assert.ok(revokeOp, 'POST /v1/agents/{id}/revoke is not documented');
    const listed = listOp.responses['200'].content['application/json'].schema;
    assert.deepEqual(Object.keys(listed.properties).sort(), ['agents', 'next_before']);
    assert.deepEqual(Object.keys(listed.properties.agents.items.properties).sort(), [
      'agent_version',
      'enrolled_at',
      'environment',
      'hostname',
      'id',
      'revoked_at',
    ]);
    assert.ok(revokeOp.responses['200'].content['application/json'].schema.properties.revoked_at);
    assert.ok(revokeOp.responses['404'] ?? revokeOp.responses['4XX'], 'no error response documented');
  });
});
