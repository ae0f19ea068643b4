// The reads the console adds, against the real server with its real delivery worker and a
// real HTTPS receiver on loopback: status words on deliveries and the ?status= filter, an
// endpoint's last delivery, a signal's deliveries per endpoint, an attempt's request rebuilt
// exactly as the receiver got it (its signature verifies with the endpoint secret), signal
// list filters with keyset paging, and tenant isolation of all of them.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitForDeliveriesMade } from './delivery-waits.ts';
import { isErrorShape, type Loose } from './harness.ts';
import {
  addUserToken,
  apiCall,
  createEndpoint,
  createSignal,
  independentlyVerified,
  listDeliveries,
  makeTestTls,
  newTenant,
  Receiver,
  startWebhookServer,
  type Tenant,
  type WebhookServer,
  waitForDelivery,
} from './webhook-harness.ts';

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

let server: WebhookServer;
let receiver: Receiver;
let t: Tenant;
let other: Tenant;
let member: string;

before(async () => {
  const tls = await makeTestTls();
  server = await startWebhookServer({ caPem: tls.caPem });
  receiver = await Receiver.start(tls);
  t = await newTenant(server);
  other = await newTenant(server);
  member = await addUserToken(server, t.tenantId, 'member');
});

after(async () => {
  await server?.close();
  await receiver?.close();
});

describe('deliveries in the console', () => {
  let ok: { id: string; secret: string };
  let failing: { id: string; secret: string };
  let signalId: string;

  before(async () => {
    receiver.on('/failing', () => ({ status: 500 }));
    ok = await createEndpoint(server, t.adminToken, {
      name: 'b-ok',
      url: receiver.url('/ok'),
      headers: { 'X-Api-Key': 'receiver-secret-value' },
    });
    failing = await createEndpoint(server, t.adminToken, { name: 'a-failing', url: receiver.url('/failing') });
    const none = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${ok.id}`, t.adminToken);
    assert.equal(none.json.last_delivery, null, 'no delivery yet');
    signalId = (await createSignal(server, t.agentKey)).signal_id;
    const [okDelivery] = await listDeliveries(server, t.adminToken, ok.id);
    await waitForDelivery(server, t.adminToken, okDelivery.id, (d) => d.state === 'succeeded', 'succeeded');
    const [failed] = await listDeliveries(server, t.adminToken, failing.id);
    await waitForDelivery(server, t.adminToken, failed.id, (d) => d.state === 'failed', 'failed after 3 attempts');
  });

  it("a signal's deliveries list each endpoint with its name and status word", async () => {
    const res = await apiCall(server, 'GET', `/v1/signals/${signalId}/deliveries`, member);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.json.deliveries.map((d: Loose) => [d.endpoint_name, d.status, d.attempts]),
      [
        ['a-failing', 'failed', 3],
        ['b-ok', 'succeeded', 1],
      ],
    );
    const okRow = res.json.deliveries[1];
    assert.equal(okRow.endpoint_id, ok.id);
    assert.equal(okRow.last_status, 200);
    assert.equal(okRow.next_attempt_at, null);
    assert.ok(okRow.completed_at);
  });

  it('every delivery view carries the status word; ?status= filters by it', async () => {
    const all = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${failing.id}/deliveries`, member);
    assert.equal(all.json.deliveries[0].status, 'failed');
    const detail = await apiCall(server, 'GET', `/v1/webhooks/deliveries/${all.json.deliveries[0].id}`, member);
    assert.equal(detail.json.status, 'failed');
    const q = (id: string, status: string) =>
      apiCall(server, 'GET', `/v1/webhooks/endpoints/${id}/deliveries?status=${status}`, member);
    assert.equal((await q(failing.id, 'failed')).json.deliveries.length, 1);
    assert.equal((await q(failing.id, 'succeeded')).json.deliveries.length, 0);
    assert.equal((await q(ok.id, 'succeeded')).json.deliveries.length, 1);
    assert.equal((await q(ok.id, 'pending')).json.deliveries.length, 0);
    assertError(await q(ok.id, 'delivering'), 400, 'invalid_request');
  });

  it('a retried delivery reads retrying while another attempt is scheduled', async () => {
    let calls = 0;
    // Retry-After 60 s on the server's clock, which the test moves: the delivery reads retrying
    // for as long as the test looks, however slowly a loaded machine gets there.
    receiver.on('/flaky', () => ({ status: ++calls === 1 ? 503 : 200, headers: { 'retry-after': '60' } }));
    const flaky = await createEndpoint(server, t.adminToken, { name: 'flaky', url: receiver.url('/flaky') });
    await createSignal(server, t.agentKey);
    const [d] = await listDeliveries(server, t.adminToken, flaky.id);
    const retrying = await waitForDelivery(server, t.adminToken, d.id, (x) => x.attempts === 1, 'the first attempt');
    assert.equal(retrying.status, 'retrying');
    const listed = await apiCall(
      server,
      'GET',
      `/v1/webhooks/endpoints/${flaky.id}/deliveries?status=retrying`,
      member,
    );
    assert.deepEqual(
      listed.json.deliveries.map((x: Loose) => x.id),
      [d.id],
    );
    server.clock.advance(60_000);
    await waitForDelivery(server, t.adminToken, d.id, (x) => x.status === 'succeeded', 'the retry');
    await apiCall(server, 'DELETE', `/v1/webhooks/endpoints/${flaky.id}`, t.adminToken);
  });

  it("an endpoint shows its newest delivery's status and time", async () => {
    // The retried signal went to these endpoints too: their deliveries of it are made first.
    await waitForDeliveriesMade(server, [ok.id, failing.id]);
    const one = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${ok.id}`, member);
    assert.equal(one.json.last_delivery.status, 'succeeded');
    assert.equal(one.json.last_delivery.last_status, 200);
    assert.ok(Date.parse(one.json.last_delivery.at) > 0);
    const list = await apiCall(server, 'GET', '/v1/webhooks/endpoints', member);
    const failingView = list.json.endpoints.find((e: Loose) => e.id === failing.id);
    assert.equal(failingView.last_delivery.status, 'failed');
    assert.ok(failingView.failing_since);
  });

  it('an attempt shows the request exactly as the receiver got it; its signature verifies with the secret', async () => {
    const [d] = await listDeliveries(server, t.adminToken, ok.id);
    const res = await apiCall(server, 'GET', `/v1/webhooks/deliveries/${d.id}/attempts/1`, t.adminToken);
    assert.equal(res.status, 200, res.text);
    const hit = receiver.hitsFor('/ok').find((h) => h.headers['guard-delivery'] === d.id);
    assert.ok(hit, 'the receiver got the delivery');
    const req = res.json.request;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, receiver.url('/ok'));
    assert.equal(req.body, hit.body.toString('utf8'), 'the rebuilt body is byte for byte the one received');
    for (const name of [
      'guard-signature',
      'guard-timestamp',
      'guard-delivery',
      'guard-event',
      'content-type',
      'user-agent',
    ])
      assert.equal(req.headers[name], hit.headers[name], name);
    assert.equal(req.headers['X-Api-Key'], 'receiver-secret-value');
    assert.ok(independentlyVerified(Buffer.from(req.body), req.headers['guard-signature'], ok.secret));
    assert.equal(res.json.status, 200);
    assert.equal(res.json.attempt, 1);
    assert.equal(res.json.error, null);
    assert.equal(typeof res.json.duration_ms, 'number');
    assert.equal(res.json.delivery_id, d.id);

    const asMember = await apiCall(server, 'GET', `/v1/webhooks/deliveries/${d.id}/attempts/1`, member);
    assert.equal(asMember.status, 200, asMember.text);
    assert.notEqual(asMember.json.request.headers['X-Api-Key'], 'receiver-secret-value');
    assert.ok(!asMember.text.includes('receiver-secret-value'), 'members never see custom header values');
    assert.equal(asMember.json.request.headers['guard-signature'], req.headers['guard-signature']);
  });

  it('a failed attempt shows its response status; an attempt that never ran is 404', async () => {
    await waitForDeliveriesMade(server, [failing.id]);
    const [d] = await listDeliveries(server, t.adminToken, failing.id);
    const third = await apiCall(server, 'GET', `/v1/webhooks/deliveries/${d.id}/attempts/3`, member);
    assert.equal(third.json.status, 500);
    assert.equal(third.json.error, 'HTTP 500');
    const hits = receiver.hitsFor('/failing').filter((h) => h.headers['guard-delivery'] === d.id);
    assert.equal(third.json.request.body, hits[2].body.toString('utf8'));
    assertError(await apiCall(server, 'GET', `/v1/webhooks/deliveries/${d.id}/attempts/4`, member), 404, 'not_found');
    assertError(
      await apiCall(server, 'GET', `/v1/webhooks/deliveries/${d.id}/attempts/0`, member),
      400,
      'invalid_request',
    );
  });

  it("another tenant's signals, deliveries and attempts are not found", async () => {
    const [d] = await listDeliveries(server, t.adminToken, ok.id);
    assertError(await apiCall(server, 'GET', `/v1/signals/${signalId}/deliveries`, other.adminToken), 404, 'not_found');
    assertError(
      await apiCall(server, 'GET', `/v1/webhooks/deliveries/${d.id}/attempts/1`, other.adminToken),
      404,
      'not_found',
    );
  });
});

describe('the signal list filters', () => {
  let tenant: Tenant;
  before(async () => {
    tenant = await newTenant(server);
    for (const [severity, signal_type] of [
      [1, 'login'],
      [2, 'login'],
      [3, 'sudo_command_executed'],
      [4, 'sudo_command_executed'],
      [5, 'rootkit'],
    ] as const) {
      await createSignal(server, tenant.agentKey, { severity, signal_type });
      await new Promise((r) => setTimeout(r, 5)); // distinct received_at
    }
  });

  const list = async (query: string) => {
    const res = await apiCall(server, 'GET', `/v1/signals?${query}`, tenant.adminToken);
    assert.equal(res.status, 200, res.text);
    return res.json as { signals: Loose[]; next_before: string | null };
  };

  it('severity_min, signal_type and server_id narrow the list', async () => {
    assert.deepEqual(
      (await list('severity_min=4')).signals.map((s) => s.severity),
      [5, 4],
    );
    assert.deepEqual(
      (await list('signal_type=login')).signals.map((s) => s.severity),
      [2, 1],
    );
    const all = await list('');
    const serverId = all.signals[0].server_id;
    assert.equal((await list(`server_id=${serverId}`)).signals.length, 5);
    assert.equal((await list('server_id=nope')).signals.length, 0);
  });

  it('since and until bound the time received; pages follow with the filters kept', async () => {
    const all = (await list('')).signals;
    const times = all.map((s) => s.received_at);
    const mid = await list(`since=${encodeURIComponent(times[3])}&until=${encodeURIComponent(times[0])}`);
    assert.deepEqual(
      mid.signals.map((s) => s.received_at),
      times.slice(1, 4),
    );
    const page1 = await list('severity_min=2&limit=2');
    assert.deepEqual(
      page1.signals.map((s) => s.severity),
      [5, 4],
    );
    assert.ok(page1.next_before);
    const page2 = await list(`severity_min=2&limit=2&before=${encodeURIComponent(page1.next_before as string)}`);
    assert.deepEqual(
      page2.signals.map((s) => s.severity),
      [3, 2],
    );
    const res = await apiCall(server, 'GET', '/v1/signals?since=yesterday', tenant.adminToken);
    assertError(res, 400, 'invalid_request');
  });
});
