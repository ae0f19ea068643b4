// Secret rotation with overlap (issue 14, item 1; DESIGN §5 contract — rotation), end to end
// against a real HTTPS receiver: every delivery during the grace period verifies for a
// receiver that holds the old secret and for one that holds the new one; after it, only for
// the new one. "Prove the new secret first": a test event signed with the new secret alone,
// and the grace period may be ended early only once the receiver accepted it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { constructEvent, sign } from '@guard/webhooks';
import { maintain } from '../src/server.ts';
import { isErrorShape, type Loose, waitFor } from './harness.ts';
import {
  addUserToken,
  apiCall,
  createEndpoint,
  createSignal,
  getDelivery,
  independentlyVerified,
  listDeliveries,
  makeTestTls,
  newTenant,
  type ReceivedRequest,
  Receiver,
  startWebhookServer,
  type Tenant,
  type TestTls,
  type WebhookServer,
  waitForDelivery,
} from './webhook-harness.ts';

const ENTRY = 'sha256=[0-9a-f]{64}';
const ONE = new RegExp(`^${ENTRY}$`);
const TWO = new RegExp(`^${ENTRY}, ${ENTRY}$`);
const silent = { info() {}, error() {} };

function assertError(res: { status: number; json: Loose; text: string }, status: number, code?: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  if (code !== undefined) assert.equal(res.json.error.code, code, res.text);
}

/** Whether a receiver holding `secret` accepts the request (the SDK: any listed entry may match). */
function accepts(hit: ReceivedRequest, secret: string): boolean {
  try {
    constructEvent(hit.body, hit.headers, secret);
    return true;
  } catch {
    return false;
  }
}

let tls: TestTls;
let server: WebhookServer;
let receiver: Receiver;
let tenant: Tenant;

before(async () => {
  tls = await makeTestTls();
  server = await startWebhookServer({ caPem: tls.caPem });
  receiver = await Receiver.start(tls);
  tenant = await newTenant(server);
});

after(async () => {
  await server?.close();
  await receiver?.close();
});

let unique = 0;
const path = (label: string) => `/${label}-${++unique}`;

/** Signals `n` times and returns the receiver's hits for them, in order. */
async function deliverSignals(route: string, n: number): Promise<ReceivedRequest[]> {
  const before = receiver.hitsFor(route).length;
  for (let i = 0; i < n; i++) await createSignal(server, tenant.agentKey, { description: `signal ${i}` });
  return (await receiver.waitForHits(route, before + n)).slice(before);
}

const rotate = (endpointId: string, body: unknown = {}, token = tenant.adminToken) =>
  apiCall(server, 'POST', `/v1/webhooks/endpoints/${endpointId}/rotate-secret`, token, body);
const verify = (endpointId: string, token = tenant.adminToken) =>
  apiCall(server, 'POST', `/v1/webhooks/endpoints/${endpointId}/rotate-secret/verify`, token);
const complete = (endpointId: string, token = tenant.adminToken) =>
  apiCall(server, 'POST', `/v1/webhooks/endpoints/${endpointId}/rotate-secret/complete`, token);
const endpointRow = (id: string) =>
  server.deps.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('a rotation with a grace period, ended early after the proof', () => {
  const route = path('rotating');
  let endpointId = '';
  let oldSecret = '';
  let newSecret = '';
  /** Which secret the receiver holds while answering: 'old' (not yet deployed) or 'both'. */
  let holds: 'old' | 'both' = 'both';

  before(async () => {
    receiver.on(route, (hit) => {
      const ok = accepts(hit, oldSecret) || (holds === 'both' && accepts(hit, newSecret));
      return { status: ok ? 204 : 400 };
    });
    const e = await createEndpoint(server, tenant.adminToken, { url: receiver.url(route) });
    endpointId = e.id;
    oldSecret = e.secret;
  });

  it('signs with exactly one sha256=<hex> before the rotation', async () => {
    const [hit] = await deliverSignals(route, 1);
    assert.match(String(hit.headers['guard-signature']), ONE);
    assert.ok(independentlyVerified(hit.body, String(hit.headers['guard-signature']), oldSecret));
  });

  it('returns the new secret once, with the grace period, and audits the rotation', async () => {
    const res = await rotate(endpointId, { grace_seconds: 3600 });
    assert.equal(res.status, 200, res.text);
    newSecret = res.json.secret;
    assert.match(newSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.notEqual(newSecret, oldSecret);
    const r = res.json.rotation;
    assert.ok(r, 'the rotation is shown');
    const grace = Date.parse(r.grace_ends_at) - Date.parse(r.started_at);
    assert.equal(grace, 3600_000);
    assert.equal(r.proof, null);
    assert.equal(r.can_complete, false);
    assert.equal(res.json.secret_rotated_at, r.started_at);
    const shown = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${endpointId}`, tenant.adminToken);
    assert.ok(!shown.text.includes(newSecret) && !shown.text.includes(oldSecret), 'reads never show a secret');
    assert.deepEqual(shown.json.rotation, r);
    const audit = await apiCall(server, 'GET', '/v1/audit?action=webhook_endpoint.secret_rotate', tenant.adminToken);
    assert.equal(audit.json.entries[0]?.target, `${endpointId} grace_seconds=3600`);
  });

  it('keeps the old secret sealed at rest like the current one', async () => {
    const row = await endpointRow(endpointId);
    assert.match(String(row.previous_secret_sealed), /^v1\./);
    assert.match(String(row.secret_sealed), /^v1\./);
    for (const column of Object.values(row)) {
      assert.ok(!String(column).includes(oldSecret.slice(6)), 'the old secret is not stored in clear');
      assert.ok(!String(column).includes(newSecret.slice(6)), 'the new secret is not stored in clear');
    }
  });

  it('signs every delivery during the grace period with both, newest first: an old-secret and a new-secret receiver both verify each', async () => {
    const hits = await deliverSignals(route, 5);
    for (const hit of hits) {
      const header = String(hit.headers['guard-signature']);
      assert.match(header, TWO);
      assert.equal(header, `${sign(hit.body, newSecret)}, ${sign(hit.body, oldSecret)}`);
      assert.ok(accepts(hit, oldSecret), 'a receiver with the old secret verifies it');
      assert.ok(accepts(hit, newSecret), 'a receiver with the new secret verifies it');
      assert.ok(!accepts(hit, `${newSecret}x`), 'a receiver with another secret does not');
      // A receiver comparing the whole header as one string fails (the docs warn of it).
      assert.ok(!independentlyVerified(hit.body, header, oldSecret));
    }
  });

  it('shows the signatures actually sent in the attempt view', async () => {
    const [hit] = await deliverSignals(route, 1);
    const deliveryId = String(hit.headers['guard-delivery']);
    await waitForDelivery(server, tenant.adminToken, deliveryId, (d) => d.state === 'succeeded', 'succeeded');
    const res = await apiCall(server, 'GET', `/v1/webhooks/deliveries/${deliveryId}/attempts/1`, tenant.adminToken);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.request.headers['guard-signature'], hit.headers['guard-signature']);
    assert.equal(res.json.request.headers['webhook-signature'], hit.headers['webhook-signature']);
    assert.equal(String(hit.headers['webhook-signature']).split(' ').length, 2, 'both entries, as sent');
    assert.equal(res.json.request.body, hit.body.toString('utf8'));
    assert.equal(res.json.payload_erased, false);
  });

  it('refuses a second rotation during the grace period, and ending it before the proof (409)', async () => {
    assertError(await rotate(endpointId, { grace_seconds: 60 }), 409, 'rotation_in_progress');
    const res = await complete(endpointId);
    assertError(res, 409, 'rotation_not_proven');
    assert.match(res.json.error.message, /prove the new secret first/);
  });

  it('sends the proof signed with the new secret alone; a receiver that has only the old one refuses it, and the grace period cannot end', async () => {
    holds = 'old';
    const before = receiver.hitsFor(route).length;
    const res = await verify(endpointId);
    assert.equal(res.status, 202, res.text);
    const [hit] = (await receiver.waitForHits(route, before + 1)).slice(before);
    assert.equal(hit.headers['guard-delivery'], res.json.delivery_id);
    assert.match(String(hit.headers['guard-signature']), ONE);
    assert.equal(hit.headers['guard-signature'], sign(hit.body, newSecret));
    assert.ok(!accepts(hit, oldSecret));
    await waitForDelivery(server, tenant.adminToken, res.json.delivery_id, (d) => d.attempts >= 1, 'attempted');
    const shown = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${endpointId}`, tenant.adminToken);
    assert.equal(shown.json.rotation.proof.signal_id, res.json.signal_id);
    assert.notEqual(shown.json.rotation.proof.status, 'succeeded');
    assert.equal(shown.json.rotation.can_complete, false);
    const refused = await complete(endpointId);
    assertError(refused, 409, 'rotation_not_proven');
    assert.match(refused.json.error.message, /has not answered the proof/);
  });

  it('lets the admin end the grace period once the receiver accepted the proof; the old secret is erased and audited', async () => {
    holds = 'both';
    const res = await verify(endpointId);
    assert.equal(res.status, 202, res.text);
    await waitForDelivery(server, tenant.adminToken, res.json.delivery_id, (d) => d.state === 'succeeded', 'succeeded');
    const shown = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${endpointId}`, tenant.adminToken);
    assert.equal(shown.json.rotation.proof.status, 'succeeded');
    assert.equal(shown.json.rotation.can_complete, true);
    const done = await complete(endpointId);
    assert.equal(done.status, 200, done.text);
    assert.equal(done.json.rotation, null);
    const row = await endpointRow(endpointId);
    assert.equal(row.previous_secret_sealed, null);
    assert.equal(row.previous_secret_expires_at, null);
    const audit = await apiCall(server, 'GET', '/v1/audit', tenant.adminToken);
    const actions = audit.json.entries.map((e: Loose) => e.action);
    for (const action of [
      'webhook_endpoint.secret_rotate',
      'webhook_endpoint.secret_proof',
      'webhook_endpoint.secret_rotation_complete',
    ])
      assert.ok(actions.includes(action), `${action} in ${actions}`);
  });

  it('signs with the new secret alone after the grace period: only the new-secret receiver verifies', async () => {
    const hits = await deliverSignals(route, 3);
    for (const hit of hits) {
      assert.match(String(hit.headers['guard-signature']), ONE);
      assert.ok(accepts(hit, newSecret));
      assert.ok(!accepts(hit, oldSecret));
    }
  });

  it('still shows both signatures for an attempt sent during the grace period', async () => {
    const deliveries = await listDeliveries(server, tenant.adminToken, endpointId);
    const during = deliveries.at(-2); // the oldest is from before the rotation
    const detail = await apiCall(server, 'GET', `/v1/webhooks/deliveries/${during.id}/attempts/1`, tenant.adminToken);
    assert.match(detail.json.request.headers['guard-signature'], TWO);
  });

  it('refuses proof and completion outside a rotation (409 no_rotation)', async () => {
    assertError(await verify(endpointId), 409, 'no_rotation');
    assertError(await complete(endpointId), 409, 'no_rotation');
  });
});

describe('a grace period that runs out (clock moved)', () => {
  it('stops signing with the old secret when the grace period ends, and maintenance erases it', async () => {
    const route = path('expiring');
    const e = await createEndpoint(server, tenant.adminToken, { url: receiver.url(route) });
    const res = await rotate(e.id, { grace_seconds: 60 });
    assert.equal(res.status, 200, res.text);
    const newSecret = res.json.secret;
    const [during] = await deliverSignals(route, 1);
    assert.ok(accepts(during, e.secret) && accepts(during, newSecret));

    server.clock.advance(61_000);
    const [afterwards] = await deliverSignals(route, 1);
    assert.match(String(afterwards.headers['guard-signature']), ONE);
    assert.ok(accepts(afterwards, newSecret) && !accepts(afterwards, e.secret));
    assert.notEqual((await endpointRow(e.id)).previous_secret_sealed, null, 'not erased before maintenance runs');
    const shown = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, tenant.adminToken);
    assert.equal(shown.json.rotation, null, 'an ended grace period is no rotation');

    await maintain(server.deps, server.deps.config, silent);
    assert.equal((await endpointRow(e.id)).previous_secret_sealed, null);
    // A new rotation may start now.
    assert.equal((await rotate(e.id, { grace_seconds: 0 })).status, 200);
  });
});

describe('the rotate-secret API', () => {
  let endpointId = '';
  const route = path('api');

  before(async () => {
    endpointId = (await createEndpoint(server, tenant.adminToken, { url: receiver.url(route) })).id;
  });

  it('takes grace_seconds from 0 to 604800 (7 days), 86400 by default', async () => {
    assertError(await rotate(endpointId, { grace_seconds: 604_801 }), 400);
    assertError(await rotate(endpointId, { grace_seconds: -1 }), 400);
    assertError(await rotate(endpointId, { grace_seconds: 1.5 }), 400);
    assertError(await rotate(endpointId, { grace: 10 }), 400);
    // No body at all is the default too.
    const res = await apiCall(server, 'POST', `/v1/webhooks/endpoints/${endpointId}/rotate-secret`, tenant.adminToken);
    assert.equal(res.status, 200, res.text);
    const r = res.json.rotation;
    assert.equal(Date.parse(r.grace_ends_at) - Date.parse(r.started_at), 86_400_000);
  });

  it('with grace_seconds 0 switches at once: the next delivery carries the new signature alone', async () => {
    const other = path('immediate');
    const e = await createEndpoint(server, tenant.adminToken, { url: receiver.url(other) });
    const res = await rotate(e.id, { grace_seconds: 0 });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.rotation, null);
    assert.equal((await endpointRow(e.id)).previous_secret_sealed, null);
    const [hit] = await deliverSignals(other, 1);
    assert.ok(accepts(hit, res.json.secret) && !accepts(hit, e.secret));
  });

  it('is for admins of the tenant: members 403, agents 403, other tenants 404, unknown endpoints 404', async () => {
    const member = await addUserToken(server, tenant.tenantId, 'member');
    assertError(await rotate(endpointId, { grace_seconds: 0 }, member), 403);
    assertError(await verify(endpointId, member), 403);
    assertError(await complete(endpointId, member), 403);
    assertError(await rotate(endpointId, {}, tenant.agentKey), 403);
    const other = await newTenant(server);
    assertError(await rotate(endpointId, {}, other.adminToken), 404);
    assertError(await verify(endpointId, other.adminToken), 404);
    assertError(await complete(endpointId, other.adminToken), 404);
    assertError(await rotate('we_nope', {}), 404);
  });

  it('refuses the proof while the endpoint is disabled', async () => {
    const e = await createEndpoint(server, tenant.adminToken, { url: receiver.url(path('disabled')) });
    await rotate(e.id, { grace_seconds: 600 });
    await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, tenant.adminToken, { enabled: false });
    assertError(await verify(e.id), 400, 'endpoint_disabled');
  });
});

describe('deliveries already pending when the rotation starts', () => {
  it('are signed with both when they are attempted during the grace period', async () => {
    const route = path('pending');
    let answer = 500;
    receiver.on(route, () => ({ status: answer }));
    const e = await createEndpoint(server, tenant.adminToken, { url: receiver.url(route) });
    const { signal_id } = await createSignal(server, tenant.agentKey);
    await receiver.waitForHits(route, 1);
    const res = await rotate(e.id, { grace_seconds: 600 });
    answer = 200;
    const hits = await receiver.waitForHits(route, 2);
    assert.match(String(hits[0].headers['guard-signature']), ONE, 'the first attempt, before the rotation');
    assert.match(String(hits[1].headers['guard-signature']), TWO, 'the retry, during the grace period');
    assert.ok(accepts(hits[1], res.json.secret) && accepts(hits[1], e.secret));
    await waitFor(async () => {
      const list = await listDeliveries(server, tenant.adminToken, e.id);
      return list.some((d: Loose) => d.signal_id === signal_id && d.state === 'succeeded');
    }, 'the delivery succeeded');
    const [d] = await listDeliveries(server, tenant.adminToken, e.id);
    const detail = await getDelivery(server, tenant.adminToken, d.id);
    assert.equal(detail.attempt_log.length, 2);
  });
});
