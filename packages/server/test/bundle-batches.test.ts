// Bundle batches (fleets: issue 24 item 4) against the real server on loopback, on both
// engines: a batch by server ids and by each filter (environment, agent version, offline
// since, as a duration and as a time), the servers skipped and why (an open request, revoked,
// offline, another tenant's: not found, nothing told), one audit entry per batch, who may ask
// (admins; support staff when the tenant allows it), the refusals, and a batch followed to
// done by the real `guard-agent daemon`.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { enrolledHome, startDaemon, stopAllDaemons } from '../../agent/test/daemon-harness.ts';
import { TempDirs } from '../../agent/test/harness.ts';
import {
  addUser,
  api,
  Clock,
  type EnrolledAgent,
  enrollAgent,
  isErrorShape,
  type Loose,
  setupTenant,
  startTestServer,
  type TestServer,
  waitFor,
} from './harness.ts';

const HOUR = 3_600_000;

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

const dirs = new TempDirs();
let server: TestServer;
let base: string;
let tenant: Awaited<ReturnType<typeof setupTenant>>;
let other: Awaited<ReturnType<typeof setupTenant>>;
let support: string;
let member: string;
/** The fleet: hostname → agent. */
const fleet: Record<string, EnrolledAgent> = {};
let othersServer: EnrolledAgent;

const batch = (body: unknown, token = tenant.admin_token) => api(base, 'POST', '/v1/bundle-batches', { token, body });
const showBatch = (id: string, token = tenant.admin_token) => api(base, 'GET', `/v1/bundle-batches/${id}`, { token });
const heartbeat = (a: EnrolledAgent, hostname: string, version: string) =>
  api(base, 'POST', '/v1/agent/heartbeat', {
    token: a.api_key,
    body: { agent_version: version, hostname, uptime_seconds: 100 },
  });
const hostsOf = (rows: Loose[]) => rows.map((r) => r.hostname).sort();
const skipsOf = (rows: Loose[]) => rows.map((s) => `${s.hostname ?? s.server_id} ${s.reason}`).sort();

/**
 * Ends every open request (as an agent's `interrupted` report would), so the next test starts
 * clean. Written to the database: an agent's own call would mark old-1 as seen.
 */
async function finishOpen(): Promise<void> {
  await server.deps.db
    .updateTable('bundle_requests')
    .set({ state: 'interrupted', finished_at: server.clock.now().toISOString(), reason: 'test cleanup' })
    .where('state', 'in', ['queued', 'delivered', 'collecting', 'uploading'])
    .execute();
}

async function enroll(hostname: string, environment: string, version: string): Promise<void> {
  fleet[hostname] = await enrollAgent(base, tenant.enroll_token, { hostname, environment, agent_version: version });
  const beat = await heartbeat(fleet[hostname], hostname, version);
  assert.equal(beat.status, 200, beat.text);
}

before(async () => {
  server = await startTestServer({ clock: new Clock(Date.now() - 3 * 24 * HOUR) });
  base = server.url;
  tenant = await setupTenant(server);
  other = await setupTenant(server);
  support = server.supportToken as string;
  member = await addUser(server, tenant.tenant_id, 'member');
  // old-1 was last seen two days before the others.
  await enroll('old-1', 'prod', '0.1.0');
  server.clock.advance(2 * 24 * HOUR);
  await enroll('web-1', 'prod', '0.1.0');
  await enroll('web-2', 'prod', '0.2.0');
  await enroll('db-1', 'staging', '0.1.0');
  await enroll('busy-1', 'prod', '0.1.0');
  await enroll('gone-1', 'prod', '0.1.0');
  const revoked = await api(base, 'POST', `/v1/agents/${fleet['gone-1'].agent_id}/revoke`, {
    token: tenant.admin_token,
  });
  assert.ok(revoked.status < 300, revoked.text);
  othersServer = await enrollAgent(base, other.enroll_token, { hostname: 'theirs-1', environment: 'prod' });
});
after(async () => {
  await stopAllDaemons();
  await server.cleanup();
  await dirs.cleanup();
});

/** busy-1 has an open request made alone. */
async function busy(): Promise<string> {
  const res = await api(base, 'POST', `/v1/servers/${fleet['busy-1'].agent_id}/bundle-requests`, {
    token: tenant.admin_token,
  });
  assert.equal(res.status, 201, res.text);
  return res.json.id;
}

describe('a batch by server ids', () => {
  it('one queued request per server sharing batch_id; the others skipped with their reason; audited once', async () => {
    await finishOpen();
    const busyId = await busy();
    const ids = ['web-1', 'web-2', 'busy-1', 'gone-1', 'web-1'].map((h) => fleet[h].agent_id);
    const res = await batch({ server_ids: [...ids, othersServer.agent_id, 'agt_nosuchserver'] });
    assert.equal(res.status, 201, res.text);
    const b = res.json;
    assert.match(b.id, /^bbt_/);
    assert.equal(b.tenant_id, tenant.tenant_id);
    assert.equal(b.created_at, server.clock.now().toISOString());
    assert.equal(b.created_by_role, 'admin');
    assert.equal(typeof b.created_by, 'string');
    assert.equal(b.filter, null);
    assert.deepEqual(hostsOf(b.requests), ['web-1', 'web-2'], 'each server once');
    for (const r of b.requests) {
      assert.equal(r.batch_id, b.id);
      assert.equal(r.state, 'queued');
      assert.match(r.id, /^brq_/);
      const alone = await api(base, 'GET', `/v1/bundle-requests/${r.id}`, { token: tenant.admin_token });
      assert.deepEqual(alone.json, r, 'GET /v1/bundle-requests/{id} shows it the same, batch_id too');
    }
    assert.deepEqual(skipsOf(b.skipped), [
      `${othersServer.agent_id} not_found`,
      'agt_nosuchserver not_found',
      'busy-1 open_request',
      'gone-1 revoked',
    ]);
    const theirs = b.skipped.find((s: Loose) => s.server_id === othersServer.agent_id);
    assert.deepEqual(theirs, {
      server_id: othersServer.agent_id,
      hostname: null,
      reason: 'not_found',
      detail: 'no such server in this tenant',
    });
    assert.match(b.skipped.find((s: Loose) => s.reason === 'open_request').detail, new RegExp(busyId));
    assert.equal(b.progress.total, 2);
    assert.equal(b.progress.queued, 2);

    // The other tenant's server got nothing.
    const theirRequests = await api(base, 'GET', '/v1/bundle-requests', { token: other.admin_token });
    assert.deepEqual(theirRequests.json.requests, []);

    const audit = await api(base, 'GET', `/v1/audit?tenant_id=${tenant.tenant_id}`, { token: support });
    const entries = (audit.json.entries as Loose[]).filter((e) => e.action.startsWith('bundle_'));
    assert.equal(entries.filter((e) => e.action === 'bundle_batch.create').length, 1, 'one entry for the batch');
    assert.ok(entries.some((e) => e.action === 'bundle_batch.create' && e.target === `${b.id} requests=2`));

    const shown = await showBatch(b.id);
    assert.equal(shown.status, 200, shown.text);
    assert.deepEqual(shown.json, b, 'GET answers the same');
    assertError(await showBatch(b.id, other.admin_token), 404, 'not_found');
    assert.equal((await showBatch(b.id, member)).status, 200, 'members read batches');
  });

  it('lists batches newest first, with progress, keyset paged; tenant-scoped', async () => {
    await finishOpen();
    server.clock.advance(1000);
    const second = await batch({ server_ids: [fleet['db-1'].agent_id] });
    assert.equal(second.status, 201, second.text);
    const page1 = await api(base, 'GET', '/v1/bundle-batches?limit=1', { token: tenant.admin_token });
    assert.equal(page1.status, 200, page1.text);
    assert.deepEqual(
      page1.json.batches.map((x: Loose) => x.id),
      [second.json.id],
    );
    assert.equal(page1.json.batches[0].progress.total, 1);
    assert.equal(page1.json.batches[0].skipped_count, 0);
    assert.ok(page1.json.next_before);
    const page2 = await api(base, 'GET', `/v1/bundle-batches?limit=1&before=${page1.json.next_before}`, {
      token: tenant.admin_token,
    });
    assert.equal(page2.json.batches.length, 1);
    assert.equal(page2.json.batches[0].progress.interrupted, 2, 'the first batch, its requests ended by the cleanup');
    assert.equal(page2.json.batches[0].skipped_count, 4);
    const theirs = await api(base, 'GET', '/v1/bundle-batches', { token: other.admin_token });
    assert.deepEqual(theirs.json.batches, []);
    const supportOne = await api(base, 'GET', `/v1/bundle-batches?tenant_id=${tenant.tenant_id}`, { token: support });
    assert.equal(supportOne.json.batches.length, 2);
  });
});

describe('a batch by filter', () => {
  it('environment: the online servers of it; the offline one skipped as offline, revoked and busy ones too', async () => {
    await finishOpen();
    await busy();
    const res = await batch({ filter: { environment: 'prod' } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.json.filter, { environment: 'prod' });
    assert.deepEqual(hostsOf(res.json.requests), ['web-1', 'web-2']);
    assert.deepEqual(skipsOf(res.json.skipped), ['busy-1 open_request', 'gone-1 revoked', 'old-1 offline']);
    assert.ok(!JSON.stringify(res.json).includes('theirs-1'), "another tenant's servers are never matched");
  });

  it('agent version: exactly that version', async () => {
    await finishOpen();
    const res = await batch({ filter: { agent_version: '0.2.0' } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(hostsOf(res.json.requests), ['web-2']);
    assert.deepEqual(res.json.skipped, []);
  });

  it('environment and agent version together', async () => {
    await finishOpen();
    const res = await batch({ filter: { environment: 'staging', agent_version: '0.1.0' } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(hostsOf(res.json.requests), ['db-1']);
  });

  it('offline since a duration: the servers last seen before it, asked', async () => {
    await finishOpen();
    const res = await batch({ filter: { offline_since: '24h' } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(hostsOf(res.json.requests), ['old-1']);
    assert.deepEqual(res.json.skipped, []);
  });

  it('offline since an RFC 3339 time; a dry run answers what would be done and creates nothing', async () => {
    await finishOpen();
    const since = new Date(server.clock.ms - HOUR).toISOString().replace('Z', '+00:00');
    const before = await api(base, 'GET', '/v1/bundle-batches', { token: tenant.admin_token });
    const dry = await batch({ filter: { offline_since: since, environment: 'prod' }, dry_run: true });
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.json.dry_run, true);
    assert.deepEqual(
      dry.json.servers.map((s: Loose) => [s.hostname, s.environment, s.agent_version]),
      [['old-1', 'prod', '0.1.0']],
    );
    const afterDry = await api(base, 'GET', '/v1/bundle-batches', { token: tenant.admin_token });
    assert.deepEqual(afterDry.json.batches, before.json.batches, 'no batch created');
    const open = await api(base, 'GET', `/v1/bundle-requests?server_id=${fleet['old-1'].agent_id}&state=queued`, {
      token: tenant.admin_token,
    });
    assert.deepEqual(open.json.requests, [], 'no request created');
    const res = await batch({ filter: { offline_since: since } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(hostsOf(res.json.requests), ['old-1']);
  });
});

describe('what is refused', () => {
  it('bad selections: 400 with a code that says why', async () => {
    await finishOpen();
    assertError(await batch({}), 400, 'invalid_selection');
    assertError(await batch({ server_ids: [fleet['web-1'].agent_id], filter: {} }), 400, 'invalid_selection');
    assertError(await batch({ server_ids: [] }), 400, 'empty_selection');
    assertError(await batch({ filter: { environment: 'nowhere' } }), 400, 'empty_selection');
    const allSkipped = await batch({ server_ids: [fleet['gone-1'].agent_id, othersServer.agent_id] });
    assertError(allSkipped, 400, 'empty_selection');
    assert.match(allSkipped.json.error.message, /1 revoked, 1 not_found/);
    assertError(await batch({ filter: { offline_since: 'yesterday' } }), 400, 'invalid_filter');
    const future = new Date(server.clock.ms + HOUR).toISOString();
    assertError(await batch({ filter: { offline_since: future } }), 400, 'invalid_filter');
    const tooMany = Array.from({ length: 501 }, (_, i) => `agt_${i}`);
    assert.equal((await batch({ server_ids: tooMany })).status, 400, 'at most 500 ids');
    assertError(await batch({ server_ids: [fleet['web-1'].agent_id] }, member), 403, 'forbidden');
    assertError(await batch({ server_ids: [fleet['web-1'].agent_id], tenant_id: other.tenant_id }), 403, 'forbidden');
    const batches = await api(base, 'GET', '/v1/bundle-batches', { token: tenant.admin_token });
    assert.ok(
      batches.json.batches.every((x: Loose) => x.progress.total > 0),
      'no empty batch was created',
    );
  });

  it('support staff: name the tenant; refused (and audited) until it allows support access, then asked', async () => {
    await finishOpen();
    const ids = [fleet['web-1'].agent_id];
    assertError(await batch({ server_ids: ids }, support), 400, 'tenant_required');
    assertError(await batch({ server_ids: ids, tenant_id: 'tnt_nosuchtenant' }, support), 404, 'not_found');
    assertError(
      await batch({ server_ids: ids, tenant_id: tenant.tenant_id }, support),
      403,
      'support_collection_not_allowed',
    );
    const audit = await api(base, 'GET', `/v1/audit?tenant_id=${tenant.tenant_id}`, { token: support });
    assert.ok(
      (audit.json.entries as Loose[]).some(
        (e) => e.action === 'bundle_request.denied' && e.target === 'bundle_batch' && e.actor_role === 'support',
      ),
    );
    const on = await api(base, 'PATCH', '/v1/tenant/settings', {
      token: tenant.admin_token,
      body: { allow_support_collection: true },
    });
    assert.equal(on.status, 200, on.text);
    const res = await batch({ server_ids: [...ids, othersServer.agent_id], tenant_id: tenant.tenant_id }, support);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.created_by_role, 'support');
    assert.equal(res.json.requests[0].requested_by_role, 'support');
    assert.deepEqual(skipsOf(res.json.skipped), [`${othersServer.agent_id} not_found`], 'still one tenant only');
    assert.equal((await showBatch(res.json.id, support)).status, 200);
  });
});

describe('batches made at the same moment', () => {
  it('never two open requests for a server, never an error: each batch 201 with the rest skipped, or 400', async () => {
    await finishOpen();
    const hosts = ['web-1', 'web-2', 'db-1'];
    const orders = [hosts, [...hosts].reverse(), ['web-2', 'db-1', 'web-1'], ['db-1', 'web-1', 'web-2']];
    const answers = await Promise.all(orders.map((o) => batch({ server_ids: o.map((h) => fleet[h].agent_id) })));
    let made = 0;
    for (const res of answers) {
      if (res.status === 400) {
        assertError(res, 400, 'empty_selection');
        continue;
      }
      assert.equal(res.status, 201, res.text);
      made += res.json.requests.length;
      for (const s of res.json.skipped) assert.equal(s.reason, 'open_request');
      assert.equal(res.json.requests.length + res.json.skipped.length, 3);
    }
    assert.equal(made, 3, 'one request per server across all the batches');
    for (const h of hosts) {
      const open = await api(base, 'GET', `/v1/bundle-requests?server_id=${fleet[h].agent_id}&state=queued`, {
        token: tenant.admin_token,
      });
      assert.equal(open.json.requests.length, 1, h);
    }
  });
});

describe('a batch followed to done by the real guard-agent daemon', () => {
  it('the daemon collects and uploads; the batch counts it done with its bundle, the offline server queued', async () => {
    await finishOpen();
    const home = await enrolledHome(dirs, base, tenant.enroll_token);
    const daemon = startDaemon(home);
    await daemon.waitForLog(/msg="guard-agent daemon started"/, 'the daemon to start');
    const res = await batch({ server_ids: [home.agentId, fleet['old-1'].agent_id] });
    assert.equal(res.status, 201, res.text);
    const id = res.json.id;
    let shown: Loose;
    await waitFor(
      async () => {
        shown = (await showBatch(id)).json;
        return shown.progress.done === 1;
      },
      'the daemon to finish its request',
      60_000,
    );
    assert.equal(shown.progress.total, 2);
    assert.equal(shown.progress.queued, 1, 'the offline server has not taken its request');
    const done = shown.requests.find((r: Loose) => r.server_id === home.agentId);
    assert.equal(done.state, 'done');
    assert.equal(done.batch_id, id);
    assert.match(done.bundle_id, /\S/);
    const bundle = await api(base, 'GET', `/v1/support/bundles/${done.bundle_id}`, { token: tenant.admin_token });
    assert.equal(bundle.status, 200, bundle.text);
    assert.equal(bundle.json.manifest.request_id, done.id);
    assert.equal(bundle.json.manifest.trigger, 'console_push');
    const waiting = shown.requests.find((r: Loose) => r.server_id === fleet['old-1'].agent_id);
    assert.equal(waiting.state, 'queued');
    assert.equal(waiting.bundle_id, undefined);
    await daemon.stop();
  });
});
