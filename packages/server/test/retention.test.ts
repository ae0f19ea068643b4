// Retention per tenant and erasure of a signal's payload (issue 14, item 6), end to end on
// this run's engine with a real HTTPS receiver: a tenant's admin sets how long its delivery
// log is kept (audited, within the server's maximum); maintenance deletes each tenant's
// deliveries and attempts past its own age and nothing else; an admin erases one signal's
// payload, which blanks it, strips its deliveries' stored data, stops what was still to be
// sent, and is audited, the signal staying as a tombstone.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { maintain } from '../src/server.ts';
import { isErrorShape, type Loose, waitFor } from './harness.ts';
import {
  addUserToken,
  apiCall,
  createEndpoint,
  createSignal,
  getDelivery,
  listDeliveries,
  makeTestTls,
  newTenant,
  Receiver,
  startWebhookServer,
  type Tenant,
  type TestTls,
  type WebhookServer,
  waitForDelivery,
} from './webhook-harness.ts';

const DAY = 86_400_000;
const silent = { info() {}, error() {} };

function assertError(res: { status: number; json: Loose; text: string }, status: number, code?: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  if (code !== undefined) assert.equal(res.json.error.code, code, res.text);
}

let tls: TestTls;
let server: WebhookServer;
let receiver: Receiver;

before(async () => {
  tls = await makeTestTls();
  // A failed attempt is retried an hour later: deliveries stay pending while a test looks.
  server = await startWebhookServer({ caPem: tls.caPem, flags: { 'webhook-retry-schedule': '0,1h' } });
  receiver = await Receiver.start(tls);
  receiver.on('/failing', () => ({ status: 500, body: 'no' }));
});

after(async () => {
  await server?.close();
  await receiver?.close();
});

const settings = (t: Tenant) => apiCall(server, 'GET', '/v1/tenant/settings', t.adminToken);
const setRetention = (token: string, days: number | null) =>
  apiCall(server, 'PATCH', '/v1/tenant/settings', token, { delivery_retention_days: days });

describe('the retention setting of a tenant', () => {
  let tenant: Tenant;
  before(async () => {
    tenant = await newTenant(server);
  });

  it('is the server default (30 days) until an admin chooses, with the server maximum (90) shown', async () => {
    const res = await settings(tenant);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, {
      allow_support_collection: false,
      bundle_retention_days: 90,
      bundle_retention_default_days: 90,
      bundle_retention_is_default: true,
      bundle_retention_max_days: 365,
      require_mfa: false,
      sso_only: false,
      delivery_retention_days: 30,
      delivery_retention_is_default: true,
      delivery_retention_default_days: 30,
      delivery_retention_max_days: 90,
    });
  });

  it('is changed by an admin, audited; null goes back to the default', async () => {
    const res = await setRetention(tenant.adminToken, 14);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.delivery_retention_days, 14);
    assert.equal(res.json.delivery_retention_is_default, false);
    const back = await setRetention(tenant.adminToken, null);
    assert.equal(back.json.delivery_retention_days, 30);
    assert.equal(back.json.delivery_retention_is_default, true);
    const audit = await apiCall(server, 'GET', '/v1/audit?action=tenant.settings', tenant.adminToken);
    assert.deepEqual(
      audit.json.entries.map((e: Loose) => e.target),
      ['delivery_retention_days=default', 'delivery_retention_days=14'],
    );
  });

  it('refuses more than the server maximum, less than a day, and anyone but an admin', async () => {
    assertError(await setRetention(tenant.adminToken, 91), 400, 'retention_above_maximum');
    assertError(await setRetention(tenant.adminToken, 0), 400);
    const member = await addUserToken(server, tenant.tenantId, 'member');
    assertError(await setRetention(member, 7), 403);
    assert.equal((await apiCall(server, 'GET', '/v1/tenant/settings', member)).json.delivery_retention_days, 30);
  });
});

describe('retention by maintenance, per tenant', () => {
  it("deletes each tenant's delivery log past its own age, keeps everyone else's, and keeps the signals", async () => {
    const short = await newTenant(server); // 7 days
    const long = await newTenant(server); // the default, 30
    assert.equal((await setRetention(short.adminToken, 7)).status, 200);
    const endpoints = new Map<Tenant, string>();
    for (const t of [short, long])
      endpoints.set(t, (await createEndpoint(server, t.adminToken, { url: receiver.url('/ok') })).id);
    const signals = new Map<Tenant, string>();
    for (const t of [short, long]) {
      signals.set(t, (await createSignal(server, t.agentKey)).signal_id);
      await waitFor(async () => {
        const [d] = await listDeliveries(server, t.adminToken, endpoints.get(t) as string);
        return d?.state === 'succeeded';
      }, 'delivered');
    }
    const stored = async (t: Tenant) => (await listDeliveries(server, t.adminToken, endpoints.get(t) as string)).length;

    server.clock.advance(6 * DAY);
    await maintain(server.deps, server.deps.config, silent);
    assert.deepEqual([await stored(short), await stored(long)], [1, 1], 'nothing is past its age yet');

    server.clock.advance(2 * DAY); // 8 days
    await maintain(server.deps, server.deps.config, silent);
    assert.deepEqual([await stored(short), await stored(long)], [0, 1], "only the 7-day tenant's log goes");
    const attempts = await server.deps.db
      .selectFrom('webhook_attempts')
      .select('tenant_id')
      .where('tenant_id', 'in', [short.tenantId, long.tenantId])
      .execute();
    assert.deepEqual(
      attempts.map((a) => a.tenant_id),
      [long.tenantId],
    );

    server.clock.advance(23 * DAY); // 31 days
    await maintain(server.deps, server.deps.config, silent);
    assert.deepEqual([await stored(short), await stored(long)], [0, 0]);
    for (const t of [short, long]) {
      const s = await apiCall(server, 'GET', `/v1/signals/${signals.get(t)}`, t.adminToken);
      assert.equal(s.status, 200, 'the signal is the tenant’s record: kept');
    }
    server.clock.offsetMs = 0;
  });
});

describe("erasing a signal's payload", () => {
  let tenant: Tenant;
  let signalId = '';
  let delivered = '';
  let pending = '';
  const erase = (id: string, token: string) => apiCall(server, 'DELETE', `/v1/signals/${id}/payload`, token);

  before(async () => {
    tenant = await newTenant(server);
    const ok = await createEndpoint(server, tenant.adminToken, { name: 'ok', url: receiver.url('/ok') });
    const failing = await createEndpoint(server, tenant.adminToken, { name: 'failing', url: receiver.url('/failing') });
    signalId = (await createSignal(server, tenant.agentKey, { description: 'alice ran sudo cat /etc/shadow' }))
      .signal_id;
    let list: Loose[] = [];
    await waitFor(async () => {
      list = [
        ...(await listDeliveries(server, tenant.adminToken, ok.id)),
        ...(await listDeliveries(server, tenant.adminToken, failing.id)),
      ];
      return list.length === 2 && list.every((d) => d.attempts === 1 && d.state !== 'delivering');
    }, 'both attempted once');
    delivered = list.find((d) => d.endpoint_id === ok.id).id;
    pending = list.find((d) => d.endpoint_id === failing.id).id;
    assert.equal((await getDelivery(server, tenant.adminToken, pending)).state, 'pending');
  });

  it('is for admins of the tenant: members 403, other tenants and unknown signals 404', async () => {
    const member = await addUserToken(server, tenant.tenantId, 'member');
    assertError(await erase(signalId, member), 403);
    assertError(await erase(signalId, (await newTenant(server)).adminToken), 404);
    assertError(await erase('sig_nope', tenant.adminToken), 404);
  });

  it('blanks the description and identity and keeps the signal as a tombstone, audited', async () => {
    const res = await erase(signalId, tenant.adminToken);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.description, '');
    assert.equal(res.json.identity_id, '');
    assert.equal(res.json.identity_name, '');
    assert.match(res.json.erased_at, /^\d{4}-/);
    assert.equal(res.json.signal_type, 'sudo_command_executed', 'what the signal was stays');
    const shown = await apiCall(server, 'GET', `/v1/signals/${signalId}`, tenant.adminToken);
    assert.deepEqual(shown.json, res.json);
    const audit = await apiCall(server, 'GET', '/v1/audit?action=signal.erase', tenant.adminToken);
    assert.deepEqual(
      audit.json.entries.map((e: Loose) => e.target),
      [signalId],
    );
    const row = await server.deps.db.selectFrom('signals').selectAll().where('id', '=', signalId).executeTakeFirst();
    assert.ok(!JSON.stringify(row).includes('shadow') && !JSON.stringify(row).includes('alice'));
  });

  it("removes its deliveries' stored data: response excerpts and signatures; the attempt view says so", async () => {
    const detail = await getDelivery(server, tenant.adminToken, delivered);
    assert.equal(detail.attempt_log[0].response_excerpt, null);
    const attempt = await apiCall(server, 'GET', `/v1/webhooks/deliveries/${delivered}/attempts/1`, tenant.adminToken);
    assert.equal(attempt.json.payload_erased, true);
    assert.equal(attempt.json.request.headers['guard-signature'], undefined);
    assert.equal(attempt.json.request.headers['webhook-signature'], undefined);
    assert.ok(!attempt.json.request.body.includes('shadow'));
    const rows = await server.deps.db
      .selectFrom('webhook_attempts')
      .select(['signature', 'response_excerpt'])
      .where('delivery_id', 'in', [delivered, pending])
      .execute();
    assert.ok(rows.length >= 2);
    for (const r of rows) assert.deepEqual({ ...r }, { signature: null, response_excerpt: null });
  });

  it('fails the deliveries still to be sent, and sends nothing more for it, even when redelivered', async () => {
    const d = await getDelivery(server, tenant.adminToken, pending);
    assert.equal(d.state, 'failed');
    assert.equal(d.last_error, "the signal's payload was erased");
    const hits = receiver.hitsFor('/failing').length;
    const res = await apiCall(server, 'POST', `/v1/webhooks/deliveries/${pending}/redeliver`, tenant.adminToken);
    assert.equal(res.status, 202, res.text);
    const after = await waitForDelivery(server, tenant.adminToken, pending, (x) => x.state === 'failed', 'failed');
    assert.equal(after.last_error, "the signal's payload was erased");
    assert.equal(receiver.hitsFor('/failing').length, hits, 'nothing was sent');
  });

  it('is idempotent: erasing again answers the tombstone and audits nothing more', async () => {
    const res = await erase(signalId, tenant.adminToken);
    assert.equal(res.status, 200);
    const audit = await apiCall(server, 'GET', '/v1/audit?action=signal.erase', tenant.adminToken);
    assert.equal(audit.json.entries.length, 1);
  });
});
