// The console's webhook pages, against the real server with its delivery worker and a real
// HTTPS receiver on loopback (issue 21, item 7): the tenant's delivery log across endpoints,
// searched by signal, endpoint, status and time with keyset paging, tenant-scoped; each
// attempt's response headers kept with credentials masked; a test event's failure never marks
// its endpoint as failing (the console's banner reads failing_since); and the event catalog in
// /openapi.json as OpenAPI 3.1 `webhooks`. On SQLite and PostgreSQL.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitForDeliveriesMade } from './delivery-waits.ts';
import { api, isErrorShape, type Loose, sleep } from './harness.ts';
import {
  addUserToken,
  apiCall,
  createEndpoint,
  createSignal,
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

interface LogPage {
  deliveries: Loose[];
  next_before: string | null;
}

async function log(query: string, token = member): Promise<LogPage> {
  const res = await apiCall(server, 'GET', `/v1/webhooks/deliveries${query ? `?${query}` : ''}`, token);
  assert.equal(res.status, 200, res.text);
  return res.json as LogPage;
}

describe("the tenant's delivery log", () => {
  let ok: { id: string };
  let down: { id: string };
  /** The signals in the order they were created, each delivered to both endpoints. */
  const signals: string[] = [];
  let testSignal = '';

  before(async () => {
    receiver.on('/log-down', () => ({ status: 503 }));
    ok = await createEndpoint(server, t.adminToken, { name: 'b-ok', url: receiver.url('/log-ok') });
    down = await createEndpoint(server, t.adminToken, { name: 'a-down', url: receiver.url('/log-down') });
    for (let i = 0; i < 3; i++) {
      signals.push((await createSignal(server, t.agentKey, { severity: 2 + i })).signal_id);
      await sleep(5); // distinct created_at
    }
    const test = await apiCall(server, 'POST', `/v1/webhooks/endpoints/${ok.id}/test`, t.adminToken);
    assert.equal(test.status, 202, test.text);
    testSignal = test.json.signal_id;
    await waitForDeliveriesMade(server, [ok.id, down.id]);
    // Another tenant's deliveries never show.
    const theirs = await createEndpoint(server, other.adminToken, { url: receiver.url('/log-other') });
    await createSignal(server, other.agentKey);
    await waitForDeliveriesMade(server, [theirs.id]);
  });

  it("lists every endpoint's deliveries, newest first, with the endpoint's name and what each carries", async () => {
    const page = await log('');
    assert.equal(page.next_before, null);
    const [test, ...rest] = page.deliveries;
    assert.deepEqual(
      [test.signal_id, test.endpoint_name, test.event_type, test.status],
      [testSignal, 'b-ok', 'test', 'succeeded'],
    );
    // A signal's two deliveries share their creation time: their order is the ids'.
    assert.deepEqual(
      rest.map((d) => d.signal_id),
      signals.toReversed().flatMap((s) => [s, s]),
    );
    for (const d of rest) {
      assert.equal(d.event_type, 'signal_created');
      assert.deepEqual(
        [d.endpoint_name, d.status],
        d.endpoint_id === ok.id ? ['b-ok', 'succeeded'] : ['a-down', 'failed'],
      );
    }
    const times = page.deliveries.map((d) => d.created_at);
    assert.deepEqual(times, times.toSorted().toReversed(), 'newest created first');
    const first = page.deliveries[0];
    for (const field of ['id', 'endpoint_id', 'state', 'attempts', 'last_status', 'completed_at'])
      assert.ok(field in first, field);
  });

  it('finds the deliveries of one signal, of one endpoint, and of one status word', async () => {
    assert.deepEqual((await log(`signal_id=${signals[1]}`)).deliveries.map((d) => d.endpoint_name).toSorted(), [
      'a-down',
      'b-ok',
    ]);
    const downs = (await log(`endpoint_id=${down.id}`)).deliveries;
    assert.deepEqual(
      downs.map((d) => d.signal_id),
      signals.toReversed(),
    );
    assert.ok(downs.every((d) => d.status === 'failed' && d.attempts === 3 && d.last_status === 503));
    const failed = (await log('status=failed')).deliveries;
    assert.deepEqual(
      failed.map((d) => d.endpoint_id),
      [down.id, down.id, down.id],
    );
    assert.equal((await log('status=pending')).deliveries.length, 0);
    assert.deepEqual(
      (await log(`status=succeeded&endpoint_id=${ok.id}&signal_id=${signals[0]}`)).deliveries.map((d) => d.signal_id),
      [signals[0]],
    );
    assert.equal((await log(`status=failed&endpoint_id=${ok.id}`)).deliveries.length, 0);
  });

  it('bounds the creation time: since inclusive, until exclusive', async () => {
    const all = (await log(`endpoint_id=${down.id}`)).deliveries;
    const [newest, middle, oldest] = all.map((d) => d.created_at);
    const q = (s: string, u: string) =>
      log(`endpoint_id=${down.id}&since=${encodeURIComponent(s)}&until=${encodeURIComponent(u)}`);
    assert.deepEqual(
      (await q(oldest, newest)).deliveries.map((d) => d.created_at),
      [middle, oldest],
    );
    const sinceMiddle = await log(`since=${encodeURIComponent(middle)}&status=failed`);
    assert.deepEqual(
      sinceMiddle.deliveries.map((d) => d.created_at),
      [newest, middle],
    );
  });

  it('pages by keyset with the filters kept, to the last page', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: LogPage = await log(
        `status=succeeded&limit=2${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`,
      );
      seen.push(...page.deliveries.map((d) => d.id));
      assert.ok(page.deliveries.every((d) => d.status === 'succeeded'));
      cursor = page.next_before;
      pages++;
    } while (cursor && pages < 10);
    const all = (await log('status=succeeded')).deliveries.map((d) => d.id);
    assert.deepEqual(seen, all, 'every succeeded delivery once, in order');
    assert.equal(all.length, 4);
  });

  it("finds nothing of another tenant's, never says whether its ids exist, and checks its query", async () => {
    const theirs = await log('', other.adminToken);
    assert.equal(theirs.deliveries.length, 1);
    assert.ok(theirs.deliveries.every((d) => d.endpoint_name === 'test endpoint'));
    assert.equal((await log(`endpoint_id=${ok.id}`, other.adminToken)).deliveries.length, 0);
    assert.equal((await log(`signal_id=${signals[0]}`, other.adminToken)).deliveries.length, 0);
    assertError(
      await apiCall(server, 'GET', '/v1/webhooks/deliveries?status=delivering', member),
      400,
      'invalid_request',
    );
    assertError(
      await apiCall(server, 'GET', '/v1/webhooks/deliveries?since=yesterday', member),
      400,
      'invalid_request',
    );
    assertError(await apiCall(server, 'GET', '/v1/webhooks/deliveries?before=nope', member), 400, 'invalid_cursor');
    assert.equal((await apiCall(server, 'GET', '/v1/webhooks/deliveries')).status, 401);
  });
});

describe("an attempt's response headers", () => {
  it('are kept in the order received, with credential-like values masked', async () => {
    receiver.on('/headers', () => ({
      status: 202,
      headers: {
        'x-request-id': 'req-42',
        'set-cookie': 'sid=cookie-secret-value; HttpOnly',
        'x-api-key': 'key-secret-value',
        'www-authenticate': 'Bearer realm="hooks"',
      },
      body: '{"queued":true}',
    }));
    const endpoint = await createEndpoint(server, t.adminToken, { name: 'headers', url: receiver.url('/headers') });
    await createSignal(server, t.agentKey);
    const [d] = await listDeliveries(server, t.adminToken, endpoint.id);
    await waitForDelivery(server, t.adminToken, d.id, (x) => x.status === 'succeeded', 'succeeded');
    const res = await apiCall(server, 'GET', `/v1/webhooks/deliveries/${d.id}/attempts/1`, member);
    assert.equal(res.status, 200, res.text);
    const { headers, omitted } = res.json.response_headers;
    assert.equal(omitted, 0);
    assert.equal(headers['x-request-id'], 'req-42');
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers['www-authenticate'], 'Bearer realm="hooks"');
    assert.equal(headers['set-cookie'], '[masked]');
    assert.equal(headers['x-api-key'], '[masked]');
    assert.ok(!res.text.includes('secret-value'), 'no credential the receiver sent is shown');
    const stored = await server.deps.db
      .selectFrom('webhook_attempts')
      .select('response_headers')
      .where('delivery_id', '=', d.id)
      .executeTakeFirstOrThrow();
    assert.ok(!String(stored.response_headers).includes('secret-value'), 'nor stored');
    assert.equal(res.json.response_excerpt, '{"queued":true}');
    await apiCall(server, 'DELETE', `/v1/webhooks/endpoints/${endpoint.id}`, t.adminToken);
  });

  it('are null for an attempt that got no response', async () => {
    const endpoint = await createEndpoint(server, t.adminToken, { name: 'closed', url: 'https://127.0.0.1:9/closed' });
    await createSignal(server, t.agentKey);
    const [d] = await listDeliveries(server, t.adminToken, endpoint.id);
    await waitForDelivery(server, t.adminToken, d.id, (x) => x.attempts >= 1, 'the first attempt');
    const res = await apiCall(server, 'GET', `/v1/webhooks/deliveries/${d.id}/attempts/1`, member);
    assert.equal(res.json.status, null);
    assert.equal(res.json.response_headers, null);
    await apiCall(server, 'DELETE', `/v1/webhooks/endpoints/${endpoint.id}`, t.adminToken);
  });
});

describe("a test event's failure", () => {
  it('never marks its endpoint as failing; a signal that fails does', async () => {
    const tenant = await newTenant(server);
    receiver.on('/test-fails', () => ({ status: 500 }));
    const e = await createEndpoint(server, tenant.adminToken, {
      name: 'new receiver',
      url: receiver.url('/test-fails'),
    });
    const test = await apiCall(server, 'POST', `/v1/webhooks/endpoints/${e.id}/test`, tenant.adminToken);
    assert.equal(test.status, 202, test.text);
    await waitForDelivery(server, tenant.adminToken, test.json.delivery_id, (d) => d.status === 'failed', 'failed');
    const after = (await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, tenant.adminToken)).json;
    assert.equal(after.failing_since, null, 'no failing streak: no banner');
    assert.equal(after.health.failure_streak, 0);
    assert.equal(after.health.disable_at, null);
    assert.equal(after.health.failed, 3, 'its attempts still count in the success rate');

    await createSignal(server, tenant.agentKey);
    await waitForDeliveriesMade(server, [e.id]);
    const failing = (await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, tenant.adminToken)).json;
    assert.ok(failing.failing_since, 'a real delivery that fails starts the streak');
    assert.equal(failing.health.failure_streak, 3);
  });
});

describe('the event catalog in /openapi.json', () => {
  it('is OpenAPI 3.1 with one webhook per event type sent, each with its body schema and examples', async () => {
    const res = await api(server.url, 'GET', '/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.json.openapi, '3.1.0');
    assert.deepEqual(Object.keys(res.json.webhooks), [
      'signal_created',
      'endpoint.failing',
      'endpoint.disabled',
      'endpoint.certificate_expiring',
      'audit.event',
    ]);
    const body = res.json.webhooks.signal_created.post.requestBody.content['application/json'];
    assert.equal(body.schema.properties.event_type.const, 'signal_created');
    assert.deepEqual(Object.keys(body.examples), ['signal_created', 'test']);
    const headers = res.json.webhooks['endpoint.failing'].post.parameters.map((p: Loose) => p.name);
    assert.ok(headers.includes('Guard-Signature') && headers.includes('webhook-signature'), headers.join());
    assert.ok(res.json.paths['/v1/webhooks/deliveries'].get, 'the delivery log is documented too');
  });
});
