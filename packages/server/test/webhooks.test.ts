// Signed webhook delivery end to end (spec 2.5, 2.6, 4.3, 5, 6, 7.2, 9; DESIGN §5–§7): the
// real server in-process with its real delivery worker, real HTTPS receivers on loopback
// (certificate from a throw-away CA the server is told to trust), a clock that follows real
// time, and the accelerated retry schedule 0, 200 ms, 400 ms (three attempts).

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { constructEvent } from '@guard/webhooks';
import { Webhook } from 'standardwebhooks';
import { waitForDeliveriesMade } from './delivery-waits.ts';
import {
  api,
  enrollAgent,
  freePort,
  isErrorShape,
  type Loose,
  refusedUrl,
  type SpawnedServer,
  setupCli,
  sleep,
  spawnServer,
  stopSpawned,
  waitFor,
} from './harness.ts';
import {
  addUserToken,
  apiCall,
  bodyJson,
  createEndpoint,
  createSignal,
  getDelivery,
  independentlyVerified,
  listDeliveries,
  makeTestTls,
  newTenant,
  postSignal,
  type ReceivedRequest,
  Receiver,
  SIGNAL,
  scrapeMetrics,
  startWebhookServer,
  type Tenant,
  type TestTls,
  type WebhookServer,
  waitForDelivery,
} from './webhook-harness.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
/** Headers the HTTP transport adds; everything else on a delivery is named by the contract. */
const TRANSPORT_HEADERS = new Set(['host', 'content-length', 'connection']);
const CONTRACT_HEADERS = [
  'content-type',
  'guard-delivery',
  'guard-event',
  'guard-signature',
  'guard-timestamp',
  'user-agent',
  'webhook-id',
  'webhook-signature',
  'webhook-timestamp',
];

function assertError(res: { status: number; json: Loose; text: string }, status: number, code?: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  if (code !== undefined) assert.equal(res.json.error.code, code, res.text);
}

/** The single delivery of an endpoint, once it exists. */
async function onlyDelivery(server: WebhookServer, token: string, endpointId: string): Promise<Loose> {
  let list: Loose[] = [];
  await waitFor(async () => {
    list = await listDeliveries(server, token, endpointId);
    return list.length > 0;
  }, `a delivery for ${endpointId}`);
  assert.equal(list.length, 1, JSON.stringify(list));
  return list[0];
}

let unique = 0;
const path = (label: string) => `/${label}-${++unique}`;

let tls: TestTls;
let server: WebhookServer;
let receiver: Receiver;

before(async () => {
  tls = await makeTestTls();
  server = await startWebhookServer({ caPem: tls.caPem });
  receiver = await Receiver.start(tls);
});

after(async () => {
  await server?.close();
  await receiver?.close();
});

describe('a delivery', () => {
  let t: Tenant;
  let endpoint: { id: string; secret: string };
  let hit: ReceivedRequest;
  let signalId: string;
  let sentAround: number;
  const p = path('shape');

  before(async () => {
    t = await newTenant(server);
    endpoint = await createEndpoint(server, t.adminToken, {
      name: 'SIEM',
      url: receiver.url(p),
      headers: { Authorization: 'Bearer receiver-token-x', 'X-Custom': 'custom value 1' },
    });
    sentAround = Date.now();
    const created = await createSignal(server, t.agentKey, { severity: 5, created_at: '2026-11-21T11:58:00.5+01:00' });
    assert.equal(created.deliveries, 1);
    signalId = created.signal_id;
    [hit] = await receiver.waitForHits(p, 1);
  });

  it('is a POST with exactly the contract headers and values', () => {
    assert.equal(hit.method, 'POST');
    const names = Object.keys(hit.headers).filter((n) => !TRANSPORT_HEADERS.has(n));
    assert.deepEqual(names.sort(), [...CONTRACT_HEADERS, 'authorization', 'x-custom'].sort());
    const lowerRaw = hit.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    assert.equal(new Set(lowerRaw).size, lowerRaw.length, `a header is sent twice: ${lowerRaw.join(', ')}`);
    assert.equal(hit.headers['content-type'], 'application/json');
    assert.match(hit.headers['guard-signature'] as string, /^sha256=[0-9a-f]{64}$/);
    assert.equal(hit.headers['guard-event'], 'signal_created');
    assert.match(hit.headers['guard-delivery'] as string, UUID);
    assert.equal(hit.headers['user-agent'], 'Guard-Webhook/1.0');
    const ts = hit.headers['guard-timestamp'] as string;
    assert.match(ts, /^\d{10}$/, 'unix seconds');
    // Between the signal's creation and the request's arrival (whole seconds), however long that took.
    assert.ok(
      Math.floor(sentAround / 1000) <= Number(ts) && Number(ts) <= hit.at / 1000,
      `Guard-Timestamp ${ts} is not the send time (created ${sentAround}, arrived ${hit.at})`,
    );
    assert.equal(hit.headers['content-length'], String(hit.body.length));
  });

  it('carries the Guard-Delivery of the delivery record', async () => {
    const d = await onlyDelivery(server, t.adminToken, endpoint.id);
    assert.equal(hit.headers['guard-delivery'], d.id);
    assert.equal(d.signal_id, signalId);
    await waitForDelivery(server, t.adminToken, d.id, (x) => x.state === 'succeeded', 'to succeed');
  });

  it('sends the endpoint custom headers as configured', () => {
    assert.equal(hit.headers.authorization, 'Bearer receiver-token-x');
    assert.equal(hit.headers['x-custom'], 'custom value 1');
  });

  it('has exactly the V1 envelope: field names, types and values (spec 2.6)', () => {
    const e = bodyJson(hit);
    assert.deepEqual(Object.keys(e).sort(), ['console_url', 'data', 'event_type', 'tenant_id', 'timestamp', 'version']);
    assert.equal(e.event_type, 'signal_created');
    assert.equal(e.version, 'v1');
    assert.equal(e.tenant_id, t.tenantId);
    assert.match(e.timestamp, ISO_UTC);
    assert.equal(e.console_url, `${server.url}/console/signals/${encodeURIComponent(signalId)}`);
    assert.deepEqual(Object.keys(e.data).sort(), [
      'created_at',
      'description',
      'environment',
      'identity_id',
      'identity_name',
      'server_id',
      'server_name',
      'severity',
      'signal_id',
      'signal_type',
    ]);
    assert.deepEqual(e.data, {
      signal_id: signalId,
      signal_type: 'sudo_command_executed',
      severity: 5,
      description: SIGNAL.description,
      server_id: t.agentId,
      server_name: t.hostname,
      identity_id: 'uid-1000',
      identity_name: 'alice',
      environment: t.environment,
      created_at: '2026-11-21T10:58:00.500Z',
    });
    assert.ok(Number.isInteger(e.data.severity));
    assert.match(hit.body.toString('utf8'), /"severity":5[,}]/, 'severity is a JSON integer, not a string or 5.0');
  });

  it('stamps the envelope timestamp with the send time, the same second as Guard-Timestamp', () => {
    const e = bodyJson(hit);
    assert.equal(Math.floor(Date.parse(e.timestamp) / 1000), Number(hit.headers['guard-timestamp']));
    const sent = Date.parse(e.timestamp);
    assert.ok(sentAround <= sent && sent <= hit.at, `sent ${sent}, created ${sentAround}, arrived ${hit.at}`);
  });

  it('is signed: an independent HMAC over the raw bytes and the SDK constructEvent both verify it', () => {
    const sig = hit.headers['guard-signature'] as string;
    assert.ok(independentlyVerified(hit.body, sig, endpoint.secret), 'independent HMAC-SHA256 check failed');
    const event = constructEvent(hit.body, hit.headers, endpoint.secret);
    assert.equal(event.data.signal_id, signalId);
    assert.ok(!independentlyVerified(hit.body, sig, `${endpoint.secret}x`), 'a wrong secret must not verify');
    const tampered = Buffer.from(hit.body.toString('utf8').replace('"severity":5', '"severity":1'));
    assert.ok(!independentlyVerified(tampered, sig, endpoint.secret), 'a changed body must not verify');
    assert.throws(() => constructEvent(tampered, hit.headers, endpoint.secret), /does not match/);
  });

  it('carries the Standard Webhooks headers, signed with the same secret: the standardwebhooks package verifies them', () => {
    assert.equal(hit.headers['webhook-id'], hit.headers['guard-delivery']);
    assert.equal(hit.headers['webhook-timestamp'], hit.headers['guard-timestamp']);
    assert.match(hit.headers['webhook-signature'] as string, /^v1,[A-Za-z0-9+/]{43}=$/);
    // The secret exactly as the create response showed it: no conversion.
    const headers = hit.headers as Record<string, string>;
    assert.deepEqual(new Webhook(endpoint.secret).verify(hit.body, headers), bodyJson(hit));
    const { 'guard-signature': _guardSignature, ...standardOnly } = headers;
    assert.equal(constructEvent(hit.body, standardOnly, endpoint.secret).data.signal_id, signalId);
    const tampered = Buffer.from(hit.body.toString('utf8').replace('"severity":5', '"severity":1'));
    assert.throws(() => new Webhook(endpoint.secret).verify(tampered, headers), /No matching signature/);
  });
});

describe('the endpoint API', () => {
  let t: Tenant;
  let member: string;

  before(async () => {
    t = await newTenant(server);
    member = await addUserToken(server, t.tenantId, 'member');
  });

  it('returns the whsec_ secret once, in the creation response; reads and edits never show it and it is stored sealed', async () => {
    const res = await apiCall(server, 'POST', '/v1/webhooks/endpoints', t.adminToken, {
      name: 'once',
      url: receiver.url('/never-called'),
    });
    assert.equal(res.status, 201, res.text);
    const secret = res.json.secret as string;
    assert.match(secret, SECRET);
    assert.equal(res.json.name, 'once');
    assert.equal(res.json.url, receiver.url('/never-called'));
    assert.deepEqual(res.json.headers, {});
    assert.equal(res.json.enabled, true);
    const id = res.json.id as string;
    const reads = [
      await apiCall(server, 'GET', `/v1/webhooks/endpoints/${id}`, t.adminToken),
      await apiCall(server, 'GET', `/v1/webhooks/endpoints/${id}`, member),
      await apiCall(server, 'GET', '/v1/webhooks/endpoints', t.adminToken),
      await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${id}`, t.adminToken, { name: 'renamed' }),
    ];
    for (const r of reads) {
      assert.equal(r.status, 200, r.text);
      assert.ok(!r.text.includes(secret), `the secret leaked: ${r.text}`);
      assert.ok(!/"secret"/.test(r.text), `a secret field is present: ${r.text}`);
    }
    const listed = reads[2].json.endpoints.find((e: Loose) => e.id === id);
    assert.ok(listed, 'the endpoint is listed');
    const row = await server.deps.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    assert.ok(row && !JSON.stringify(row).includes(secret), 'the secret is stored in clear');
    const second = await createEndpoint(server, t.adminToken, { url: receiver.url('/never-called') });
    assert.notEqual(second.secret, secret, 'every endpoint gets its own secret');
  });

  it('requires a name: missing or empty is a 400', async () => {
    const url = receiver.url('/never-called');
    assertError(await apiCall(server, 'POST', '/v1/webhooks/endpoints', t.adminToken, { url }), 400);
    assertError(await apiCall(server, 'POST', '/v1/webhooks/endpoints', t.adminToken, { name: '', url }), 400);
  });

  it('refuses http:// URLs with a 400 saying https is required, on create and on edit', async () => {
    const res = await apiCall(server, 'POST', '/v1/webhooks/endpoints', t.adminToken, {
      name: 'plain',
      url: `http://127.0.0.1:${receiver.port}/hook`,
    });
    assertError(res, 400);
    assert.match(res.json.error.message, /https:\/\//);
    assert.match(res.json.error.message, /http:\/\//);
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url('/never-called') });
    const patch = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, {
      url: 'http://localhost/hook',
    });
    assertError(patch, 400);
    assert.match(patch.json.error.message, /https:\/\//);
    const after = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, t.adminToken);
    assert.equal(after.json.url, receiver.url('/never-called'), 'a refused edit changes nothing');
    for (const url of ['ftp://example.com/x', 'not a url', 'https://user:pw@example.com/', 'https://example.com/#x'])
      assertError(await apiCall(server, 'POST', '/v1/webhooks/endpoints', t.adminToken, { name: 'x', url }), 400);
  });

  it('refuses invalid custom headers on create and on edit: bad names, CR/LF, reserved names', async () => {
    const url = receiver.url('/never-called');
    const bad: Record<string, string>[] = [
      { 'X Bad': 'v' },
      { 'X-Inject': 'a\r\nX-Evil: 1' },
      { 'X-Nul': 'a\u0000b' },
      { 'Content-Type': 'text/plain' },
      { 'user-agent': 'me' },
      { Host: 'example.com' },
      { 'Guard-Signature': 'sha256=00' },
      { 'guard-custom': 'x' },
    ];
    for (const headers of bad) {
      const res = await apiCall(server, 'POST', '/v1/webhooks/endpoints', t.adminToken, { name: 'h', url, headers });
      assertError(res, 400);
    }
    const e = await createEndpoint(server, t.adminToken, { url, headers: { 'X-Ok': '1' } });
    for (const headers of bad) {
      const res = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, { headers });
      assertError(res, 400);
    }
    const after = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, t.adminToken);
    assert.deepEqual(after.json.headers, { 'X-Ok': '1' });
  });

  it('edits name, url, headers and enabled with PATCH, and the next delivery follows the edit', async () => {
    const t2 = await newTenant(server);
    const p1 = path('before-edit');
    const p2 = path('after-edit');
    const e = await createEndpoint(server, t2.adminToken, {
      name: 'old',
      url: receiver.url(p1),
      headers: { 'X-Old': 'o' },
    });
    const res = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t2.adminToken, {
      name: 'new name',
      url: receiver.url(p2),
      headers: { 'X-New': 'n' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.name, 'new name');
    assert.equal(res.json.url, receiver.url(p2));
    assert.deepEqual(res.json.headers, { 'X-New': 'n' });
    const read = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, t2.adminToken);
    assert.deepEqual(
      { name: read.json.name, url: read.json.url, headers: read.json.headers },
      { name: 'new name', url: receiver.url(p2), headers: { 'X-New': 'n' } },
    );
    await createSignal(server, t2.agentKey);
    const [hit] = await receiver.waitForHits(p2, 1);
    assert.equal(hit.headers['x-new'], 'n');
    assert.equal(hit.headers['x-old'], undefined);
    assert.equal(receiver.hitsFor(p1).length, 0);

    const off = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t2.adminToken, { enabled: false });
    assert.equal(off.status, 200, off.text);
    assert.equal(off.json.enabled, false);
    assert.equal(typeof off.json.disabled_reason, 'string');
    assert.equal((await createSignal(server, t2.agentKey)).deliveries, 0, 'a disabled endpoint gets no delivery');
    const on = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t2.adminToken, { enabled: true });
    assert.equal(on.json.enabled, true);
    assert.equal(on.json.disabled_reason, null);
    assert.equal((await createSignal(server, t2.agentKey)).deliveries, 1);
    await receiver.waitForHits(p2, 2);
    assertError(await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t2.adminToken, {}), 400);
  });

  it('deletes an endpoint: 204, then 404 on read, edit and delete, and new signals create no delivery for it', async () => {
    const t2 = await newTenant(server);
    const e = await createEndpoint(server, t2.adminToken, { url: receiver.url(path('deleted')) });
    const del = await apiCall(server, 'DELETE', `/v1/webhooks/endpoints/${e.id}`, t2.adminToken);
    assert.equal(del.status, 204, del.text);
    assertError(await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, t2.adminToken), 404);
    assertError(await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t2.adminToken, { name: 'x' }), 404);
    assertError(await apiCall(server, 'DELETE', `/v1/webhooks/endpoints/${e.id}`, t2.adminToken), 404);
    const list = await apiCall(server, 'GET', '/v1/webhooks/endpoints', t2.adminToken);
    assert.deepEqual(list.json.endpoints, []);
    assert.equal((await createSignal(server, t2.agentKey)).deliveries, 0);
  });

  it('lets only admins write: a member reads but gets 403 on every write; agent keys get 403, no token 401', async () => {
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(path('acl')) });
    const { signal_id } = await createSignal(server, t.agentKey);
    assert.ok(signal_id);
    const delivery = (await listDeliveries(server, t.adminToken, e.id))[0];
    assert.ok(delivery, 'the endpoint has a delivery');
    const writes: [string, string, unknown][] = [
      ['POST', '/v1/webhooks/endpoints', { name: 'm', url: receiver.url('/never-called') }],
      ['PATCH', `/v1/webhooks/endpoints/${e.id}`, { name: 'member was here' }],
      ['DELETE', `/v1/webhooks/endpoints/${e.id}`, undefined],
      ['POST', `/v1/webhooks/endpoints/${e.id}/test`, undefined],
      ['POST', `/v1/webhooks/deliveries/${delivery.id}/redeliver`, undefined],
    ];
    for (const [method, p, body] of writes) {
      assertError(await apiCall(server, method, p, member, body), 403);
      assertError(await apiCall(server, method, p, t.agentKey, body), 403);
      assertError(await apiCall(server, method, p, undefined, body), 401);
    }
    const reads = [
      '/v1/webhooks/endpoints',
      `/v1/webhooks/endpoints/${e.id}`,
      `/v1/webhooks/endpoints/${e.id}/deliveries`,
      `/v1/webhooks/deliveries/${delivery.id}`,
    ];
    for (const p of reads) {
      const r = await apiCall(server, 'GET', p, member);
      assert.equal(r.status, 200, `${p}: ${r.text}`);
      assertError(await apiCall(server, 'GET', p, t.agentKey), 403);
      assertError(await apiCall(server, 'GET', p), 401);
    }
    const still = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, t.adminToken);
    assert.equal(still.json.name, 'test endpoint', 'refused writes changed nothing');
  });

  it("isolates tenants: another tenant's admin neither sees nor changes an endpoint or its deliveries", async () => {
    const owner = await newTenant(server);
    const other = await newTenant(server);
    const p = path('isolated');
    const e = await createEndpoint(server, owner.adminToken, { url: receiver.url(p) });
    await createSignal(server, owner.agentKey);
    await receiver.waitForHits(p, 1);
    const d = await onlyDelivery(server, owner.adminToken, e.id);
    for (const [method, url, body] of [
      ['GET', `/v1/webhooks/endpoints/${e.id}`, undefined],
      ['PATCH', `/v1/webhooks/endpoints/${e.id}`, { name: 'hijacked', url: receiver.url('/stolen') }],
      ['DELETE', `/v1/webhooks/endpoints/${e.id}`, undefined],
      ['GET', `/v1/webhooks/endpoints/${e.id}/deliveries`, undefined],
      ['POST', `/v1/webhooks/endpoints/${e.id}/test`, undefined],
      ['GET', `/v1/webhooks/deliveries/${d.id}`, undefined],
      ['POST', `/v1/webhooks/deliveries/${d.id}/redeliver`, undefined],
    ] as const)
      assertError(await apiCall(server, method, url, other.adminToken, body), 404);
    const list = await apiCall(server, 'GET', '/v1/webhooks/endpoints', other.adminToken);
    assert.deepEqual(list.json.endpoints, []);
    assert.equal(
      (await createSignal(server, other.agentKey)).deliveries,
      0,
      "another tenant's signal is not delivered",
    );
    const mine = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, owner.adminToken);
    assert.equal(mine.json.name, 'test endpoint');
    assert.equal(mine.json.url, receiver.url(p));
    await waitForDeliveriesMade(server, [e.id]);
    assert.equal(receiver.hitsFor(p).length, 1);
    assert.equal(receiver.hitsFor('/stolen').length, 0);
  });
});

describe('custom header values at rest (sealed like the secret)', () => {
  /** The database file and its WAL, as bytes: what a copy of the data dir gives away. */
  async function databaseBytes(dataDir: string): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (const name of ['guard.db', 'guard.db-wal'])
      parts.push(await readFile(join(dataDir, name)).catch(() => Buffer.alloc(0)));
    return Buffer.concat(parts);
  }
  const MASK = '\u2022\u2022\u2022\u2022';

  it('keeps header values out of guard.db and its WAL, and deliveries still carry the real values', async () => {
    const t = await newTenant(server);
    const p = path('sealed-headers');
    const token = `Bearer sealed-${randomUUID()}`;
    const team = `team-${randomUUID()}`;
    const e = await createEndpoint(server, t.adminToken, {
      url: receiver.url(p),
      headers: { Authorization: token, 'X-Team': team },
    });
    await createSignal(server, t.agentKey);
    const [hit] = await receiver.waitForHits(p, 1);
    assert.equal(hit.headers.authorization, token);
    assert.equal(hit.headers['x-team'], team);
    const row = await server.deps.db
      .selectFrom('webhook_endpoints')
      .select('headers')
      .where('id', '=', e.id)
      .executeTakeFirstOrThrow();
    assert.ok(!row.headers.includes(token) && !row.headers.includes(team), `stored in clear: ${row.headers}`);
    const bytes = await databaseBytes(server.dataDir);
    for (const value of [token, team, token.slice(7)])
      assert.equal(bytes.indexOf(value), -1, `${value} is in the database files in clear`);
  });

  it('shows header values to admins and only the names to members, values masked, in every read', async () => {
    const t = await newTenant(server);
    const member = await addUserToken(server, t.tenantId, 'member');
    const token = `Bearer shown-${randomUUID()}`;
    const e = await createEndpoint(server, t.adminToken, {
      url: receiver.url(path('masked')),
      headers: { Authorization: token, 'X-Env': 'prod' },
    });
    assert.deepEqual(e.headers, { Authorization: token, 'X-Env': 'prod' }, 'the creating admin sees the values');
    const admin = [
      (await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, t.adminToken)).json,
      (await apiCall(server, 'GET', '/v1/webhooks/endpoints', t.adminToken)).json.endpoints[0],
      (await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, { name: 'renamed' })).json,
    ];
    for (const view of admin) assert.deepEqual(view.headers, { Authorization: token, 'X-Env': 'prod' });
    for (const res of [
      await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, member),
      await apiCall(server, 'GET', '/v1/webhooks/endpoints', member),
    ]) {
      assert.equal(res.status, 200, res.text);
      assert.ok(!res.text.includes(token.slice(7)), `a member reads the value: ${res.text}`);
      const view = res.json.endpoints?.[0] ?? res.json;
      assert.deepEqual(view.headers, { Authorization: MASK, 'X-Env': MASK });
    }
  });

  it("masks an endpoint URL's query values and userinfo password for members, in the endpoint and the attempt as sent", async () => {
    const t = await newTenant(server);
    const member = await addUserToken(server, t.tenantId, 'member');
    const p = path('query-credential');
    const secret = `qs-${randomUUID()}`;
    const url = `${receiver.url(p)}?token=${secret}&team=blue`;
    const e = await createEndpoint(server, t.adminToken, { url });
    await createSignal(server, t.agentKey);
    await receiver.waitForHits(p, 1);
    const [delivery] = await listDeliveries(server, t.adminToken, e.id);
    await waitForDelivery(server, t.adminToken, delivery.id, (d) => d.attempts === 1, 'the attempt');
    const masked = `${receiver.url(p)}?token=${MASK}&team=${MASK}`;
    const endpointOf = async (token: string) =>
      (await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, token)).json;
    const attemptOf = async (token: string) =>
      (await apiCall(server, 'GET', `/v1/webhooks/deliveries/${delivery.id}/attempts/1`, token)).json;
    assert.equal((await endpointOf(t.adminToken)).url, url, 'admins see the URL as configured');
    assert.equal((await attemptOf(t.adminToken)).request.url, url);
    assert.equal((await endpointOf(member)).url, masked);
    const list = await apiCall(server, 'GET', '/v1/webhooks/endpoints', member);
    assert.ok(!list.text.includes(secret), list.text);
    const attempt = await attemptOf(member);
    assert.equal(attempt.request.url, masked);
    assert.ok(!JSON.stringify(attempt).includes(secret));
  });

  it('seals header values an earlier release stored in clear at the next start; reads and deliveries work before and after', async () => {
    const dataDir = await mkdtemp(join(os.tmpdir(), 'guard-webhook-legacy-'));
    let s1: WebhookServer | undefined;
    let s2: WebhookServer | undefined;
    try {
      s1 = await startWebhookServer({ caPem: tls.caPem, dataDir });
      const t = await newTenant(s1);
      const member = await addUserToken(s1, t.tenantId, 'member');
      const p = path('legacy-headers');
      const token = `Bearer legacy-${randomUUID()}`;
      const e = await createEndpoint(s1, t.adminToken, { url: receiver.url(p) });
      // The row as a release before sealing wrote it: a JSON object in clear.
      await s1.deps.db
        .updateTable('webhook_endpoints')
        .set({ headers: JSON.stringify({ Authorization: token }) })
        .where('id', '=', e.id)
        .execute();
      const before = await apiCall(s1, 'GET', `/v1/webhooks/endpoints/${e.id}`, t.adminToken);
      assert.deepEqual(before.json.headers, { Authorization: token });
      const masked = await apiCall(s1, 'GET', `/v1/webhooks/endpoints/${e.id}`, member);
      assert.deepEqual(masked.json.headers, { Authorization: MASK });
      await createSignal(s1, t.agentKey);
      assert.equal((await receiver.waitForHits(p, 1))[0].headers.authorization, token);
      await s1.close();

      s2 = await startWebhookServer({ caPem: tls.caPem, dataDir });
      const row = await s2.deps.db
        .selectFrom('webhook_endpoints')
        .select('headers')
        .where('id', '=', e.id)
        .executeTakeFirstOrThrow();
      assert.ok(!row.headers.includes(token.slice(7)), `still in clear after the start: ${row.headers}`);
      assert.equal((await databaseBytes(dataDir)).indexOf(token.slice(7)), -1, 'the old value lingers in the files');
      const after = await apiCall(s2, 'GET', `/v1/webhooks/endpoints/${e.id}`, t.adminToken);
      assert.deepEqual(after.json.headers, { Authorization: token });
      await createSignal(s2, t.agentKey);
      assert.equal((await receiver.waitForHits(p, 2))[1].headers.authorization, token);
    } finally {
      await s1?.close();
      await s2?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('retries and failures', () => {
  let t: Tenant;
  before(async () => {
    t = await newTenant(server);
  });

  it('retries after 500, 500 and succeeds on 200: three attempts, one Guard-Delivery, fresh signed timestamps, gaps ≈ 200 ms and 400 ms', async () => {
    const p = path('flaky');
    receiver.on(p, (_req, n) => (n < 3 ? { status: 500, body: 'boom' } : { status: 200, body: 'ok' }));
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(p) });
    await createSignal(server, t.agentKey);
    const hits = await receiver.waitForHits(p, 3);
    const ids = new Set(hits.map((h) => h.headers['guard-delivery']));
    assert.equal(ids.size, 1, 'every attempt carries the same Guard-Delivery');
    const stamps = hits.map((h) => Date.parse(bodyJson(h).timestamp));
    assert.ok(stamps[0] < stamps[1] && stamps[1] < stamps[2], `envelope timestamps are not fresh: ${stamps}`);
    for (const h of hits) {
      assert.equal(Math.floor(Date.parse(bodyJson(h).timestamp) / 1000), Number(h.headers['guard-timestamp']));
      assert.ok(independentlyVerified(h.body, h.headers['guard-signature'] as string, e.secret));
      constructEvent(h.body, h.headers, e.secret);
    }
    assert.equal(new Set(hits.map((h) => h.headers['guard-signature'])).size, 3, 'each attempt is signed afresh');
    const d = await waitForDelivery(
      server,
      t.adminToken,
      hits[0].headers['guard-delivery'] as string,
      (x) => x.state === 'succeeded',
      'to succeed',
    );
    // The gaps as the server recorded them, from an attempt's end (its outcome is written after
    // it, and the retry is due from then) to the next one's start; arrival times at the receiver
    // would add each request's own delay, which a loaded machine stretches. Late is bounded
    // loosely: a claim is due within a poll (20 ms), but a loaded machine may be slow to make it.
    const waited = (i: number) =>
      Date.parse(d.attempt_log[i].started_at) -
      (Date.parse(d.attempt_log[i - 1].started_at) + d.attempt_log[i - 1].duration_ms);
    // ms timestamps and a rounded duration: 2 ms of slack.
    assert.ok(waited(1) >= 158 && waited(1) < 2000, `first retry after ${waited(1)} ms, schedule says 200 ms ± 20 %`);
    assert.ok(waited(2) >= 318 && waited(2) < 2000, `second retry after ${waited(2)} ms, schedule says 400 ms ± 20 %`);
    assert.equal(d.attempts, 3);
    assert.equal(d.last_status, 200);
    assert.deepEqual(
      d.attempt_log.map((a: Loose) => [a.attempt, a.status, a.error, a.response_excerpt]),
      [
        [1, 500, 'HTTP 500', 'boom'],
        [2, 500, 'HTTP 500', 'boom'],
        [3, 200, null, 'ok'],
      ],
    );
    await sleep(300);
    assert.equal(receiver.hitsFor(p).length, 3, 'nothing is sent after success');
  });

  it('fails the delivery once the schedule is exhausted; every attempt is readable with status, duration, error and a 1 KiB excerpt', async () => {
    const p = path('down');
    const big = `DOWN:${'x'.repeat(64 * 1024)}`;
    receiver.on(p, () => ({ status: 500, body: big }));
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(p) });
    await createSignal(server, t.agentKey);
    const d0 = await onlyDelivery(server, t.adminToken, e.id);
    const d = await waitForDelivery(server, t.adminToken, d0.id, (x) => x.state === 'failed', 'to fail', 15_000);
    assert.equal(d.attempts, 3);
    assert.equal(d.last_status, 500);
    assert.match(d.last_error, /500/);
    assert.match(d.completed_at, ISO_UTC);
    assert.equal(d.next_attempt_at, null);
    assert.equal(d.attempt_log.length, 3);
    d.attempt_log.forEach((a: Loose, i: number) => {
      assert.equal(a.attempt, i + 1);
      assert.equal(a.status, 500);
      assert.match(a.error, /HTTP 500/);
      assert.match(a.started_at, ISO_UTC);
      assert.ok(
        Number.isInteger(a.duration_ms) && a.duration_ms >= 0 && a.duration_ms < 1000,
        `duration ${a.duration_ms}`,
      );
      assert.ok(
        Buffer.byteLength(a.response_excerpt) <= 1024,
        `excerpt of ${Buffer.byteLength(a.response_excerpt)} bytes`,
      );
      assert.equal(a.response_excerpt, big.slice(0, 1024));
    });
    await sleep(700);
    assert.equal(receiver.hitsFor(p).length, 3, 'no attempt after the schedule is exhausted');
    const listed = (await listDeliveries(server, t.adminToken, e.id))[0];
    assert.equal(listed.state, 'failed');

    // An admin redelivers once the receiver is fixed: same Guard-Delivery, now succeeded.
    receiver.on(p, () => ({ status: 204 }));
    const re = await apiCall(server, 'POST', `/v1/webhooks/deliveries/${d.id}/redeliver`, t.adminToken);
    assert.equal(re.status, 202, re.text);
    const hits = await receiver.waitForHits(p, 4);
    assert.equal(hits[3].headers['guard-delivery'], d.id);
    const done = await waitForDelivery(server, t.adminToken, d.id, (x) => x.state === 'succeeded', 'to succeed');
    assert.equal(done.attempt_log.length, 4);
    assert.equal(done.attempt_log[3].status, 204);
  });

  it('honours Retry-After when the receiver asks for longer than the schedule', async () => {
    const p = path('busy');
    receiver.on(p, (_req, n) => (n === 1 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 }));
    await createEndpoint(server, t.adminToken, { url: receiver.url(p) });
    await createSignal(server, t.agentKey);
    const hits = await receiver.waitForHits(p, 2, 15_000);
    // Never early: the retry is due 1 s after the first answer was recorded, which is after it
    // arrived. Late by 2 s at most, as a loaded machine may be slow to claim it.
    const gap = hits[1].at - hits[0].at;
    assert.ok(gap >= 950 && gap < 3000, `retried after ${gap} ms; Retry-After asked for 1000 ms`);
    assert.equal(hits[0].headers['guard-delivery'], hits[1].headers['guard-delivery']);
  });

  it('does not follow redirects: a 302 is a failed attempt that says so, and the redirect target gets nothing', async () => {
    const p = path('moved');
    const target = path('redirect-target');
    receiver.on(p, () => ({ status: 302, headers: { location: receiver.url(target) } }));
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(p) });
    await createSignal(server, t.agentKey);
    const d0 = await onlyDelivery(server, t.adminToken, e.id);
    const d = await waitForDelivery(server, t.adminToken, d0.id, (x) => x.state === 'failed', 'to fail');
    assert.equal(d.last_status, 302);
    assert.equal(d.attempt_log.length, 3);
    for (const a of d.attempt_log) {
      assert.equal(a.status, 302);
      assert.match(a.error, /redirect/i);
    }
    assert.equal(receiver.hitsFor(p).length, 3);
    assert.equal(receiver.hitsFor(target).length, 0, 'the redirect was followed');
  });

  it('refuses a receiver whose certificate is not trusted: the attempt fails in the TLS handshake and nothing is posted', async () => {
    const untrusted = await Receiver.start(await makeTestTls());
    try {
      const e = await createEndpoint(server, t.adminToken, { url: untrusted.url('/untrusted') });
      await createSignal(server, t.agentKey);
      const d0 = await onlyDelivery(server, t.adminToken, e.id);
      const d = await waitForDelivery(server, t.adminToken, d0.id, (x) => x.state === 'failed', 'to fail');
      for (const a of d.attempt_log) {
        assert.equal(a.status, null);
        assert.match(a.error, /CERT|certificate|SIGNATURE|self.signed/i);
      }
      assert.equal(untrusted.hits.length, 0);
    } finally {
      await untrusted.close();
    }
  });

  it('enforces the delivery timeout: an attempt to a receiver that never answers fails after about webhook-timeout-ms', async () => {
    const silent = await Receiver.start(tls);
    // A server of its own with a 1 s attempt timeout (the harness's is the service's 10 s).
    const server = await startWebhookServer({ caPem: tls.caPem, flags: { 'webhook-timeout-ms': '1000' } });
    try {
      const t = await newTenant(server);
      silent.on('/silent', () => 'hang');
      const e = await createEndpoint(server, t.adminToken, { url: silent.url('/silent') });
      await createSignal(server, t.agentKey);
      const [hit] = await silent.waitForHits('/silent', 1);
      const d0 = await onlyDelivery(server, t.adminToken, e.id);
      const d = await waitForDelivery(
        server,
        t.adminToken,
        d0.id,
        (x) => x.attempt_log.length >= 1,
        'an attempt',
        15_000,
      );
      const a = d.attempt_log[0];
      assert.equal(a.status, null);
      assert.match(a.error, /timed out/i);
      // Ended by the 1 s timeout: not before it, and far sooner than anything else would end it
      // (the 60 s lease), however loaded the machine.
      assert.ok(a.duration_ms >= 900 && a.duration_ms < 10_000, `attempt took ${a.duration_ms} ms, timeout is 1000 ms`);
      assert.ok(Date.now() - hit.at < 15_000, `the attempt was recorded ${Date.now() - hit.at} ms after it arrived`);
      await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, { enabled: false });
      await waitForDelivery(server, t.adminToken, d0.id, (x) => x.state === 'failed', 'to fail', 15_000);
    } finally {
      await server.close();
      await silent.close();
    }
  });
});

describe('failure logs (the real bin/guard-server, its log on stdout)', () => {
  it('logs each failed attempt at warn with endpoint, delivery, attempt, reason and next retry, and never the secret, header values or body', {
    timeout: 60_000,
  }, async () => {
    const dir = await mkdtemp(join(os.tmpdir(), 'guard-webhook-logs-'));
    const caFile = join(dir, 'ca.pem');
    await writeFile(caFile, tls.caPem);
    const dataDir = join(dir, 'data');
    let spawned: SpawnedServer | undefined;
    const previousCa = process.env.NODE_EXTRA_CA_CERTS;
    try {
      const setup = await setupCli(dataDir);
      process.env.NODE_EXTRA_CA_CERTS = caFile;
      spawned = await spawnServer(dataDir, await freePort(), [
        '--webhook-allow-private',
        '--webhook-retry-schedule',
        '0,200ms',
        '--webhook-timeout-ms',
        '2000',
      ]);
      const agent = await enrollAgent(spawned.url, setup.enroll_token);
      const failing = path('logged-500');
      const fine = path('logged-200');
      const responseBody = `receiver-body-${randomUUID()}`;
      receiver.on(failing, () => ({ status: 500, body: responseBody }));
      const headerValue = `Bearer log-${randomUUID()}`;
      const create = async (url: string) => {
        const res = await api(spawned?.url ?? '', 'POST', '/v1/webhooks/endpoints', {
          token: setup.admin_token,
          body: { name: 'logged', url, headers: { Authorization: headerValue } },
        });
        assert.equal(res.status, 201, res.text);
        return res.json as { id: string; secret: string };
      };
      const bad = await create(receiver.url(failing));
      const good = await create(receiver.url(fine));
      const refused = await create(`${await refusedUrl('https')}/nobody-listens`);
      const description = `log-test-description-${randomUUID()}`;
      const sig = await api(spawned.url, 'POST', '/v1/signals', {
        token: agent.api_key,
        body: { ...SIGNAL, description },
      });
      assert.equal(sig.status, 201, sig.text);
      await receiver.waitForHits(fine, 1);

      type Line = Record<string, Loose>;
      const failures = (endpointId: string): Line[] =>
        spawned
          ?.output()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Line)
          .filter((l) => l.endpointId === endpointId && l.attempt !== undefined) ?? [];
      await waitFor(
        () => failures(bad.id).length >= 2 && failures(refused.id).length >= 2,
        'two logged failures per failing endpoint',
        10_000,
      );
      const [first, last] = failures(bad.id);
      for (const line of [first, last]) {
        assert.equal(line.level, 40, 'warn');
        assert.match(line.msg, /webhook delivery attempt failed/);
        assert.match(line.deliveryId, UUID);
        assert.equal(line.status, 500);
        assert.match(line.error, /HTTP 500/);
      }
      assert.equal(first.deliveryId, last.deliveryId);
      assert.deepEqual([first.attempt, last.attempt], [1, 2]);
      assert.match(first.nextAttemptAt, ISO_UTC, 'a retry follows the first attempt');
      assert.equal(last.nextAttemptAt, null, 'the schedule is exhausted after the second');
      assert.equal(last.outcome, 'failed');
      assert.equal(first.outcome, 'retrying');
      const [conn] = failures(refused.id);
      assert.equal(conn.status, null);
      assert.match(conn.error, /ECONNREFUSED/);
      assert.deepEqual(failures(good.id), [], 'a successful delivery logs nothing');

      const out = spawned.output();
      for (const secret of [
        bad.secret,
        good.secret,
        refused.secret,
        headerValue,
        headerValue.slice(7),
        description,
        responseBody,
      ])
        assert.ok(!out.includes(secret), `the log holds ${secret}`);
    } finally {
      if (previousCa === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = previousCa;
      if (spawned) await stopSpawned(spawned);
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('isolation between endpoints (own server: 30 s timeout, 4 connections per endpoint)', () => {
  // A far longer timeout than the main server's: "arrived before any hanging attempt timed out"
  // then holds on a loaded machine too. Hanging requests end when their receiver closes.
  let iso: WebhookServer;
  before(async () => {
    iso = await startWebhookServer({ caPem: tls.caPem, flags: { 'webhook-timeout-ms': '30000' } });
  });
  after(async () => {
    await iso?.close();
  });

  it('keeps a hanging endpoint from delaying another: 20 signals reach the healthy endpoint while the other hangs', async () => {
    const t = await newTenant(iso);
    const stuck = await Receiver.start(tls);
    try {
      stuck.on('/stuck', () => 'hang');
      const fast = path('healthy');
      const h = await createEndpoint(iso, t.adminToken, { name: 'hangs', url: stuck.url('/stuck') });
      await createEndpoint(iso, t.adminToken, { name: 'healthy', url: receiver.url(fast) });
      const start = Date.now();
      for (let i = 0; i < 20; i++) await createSignal(iso, t.agentKey, { description: `signal ${i}` });
      const hits = await receiver.waitForHits(fast, 20, 25_000);
      const last = Math.max(...hits.map((x) => x.at)) - start;
      const hung = await listDeliveries(iso, t.adminToken, h.id);
      assert.ok(
        hung.every((x: Loose) => x.attempts === 0),
        `all 20 healthy deliveries (the last after ${last} ms) should arrive before any hanging attempt times out`,
      );
      assert.equal(stuck.hits.length, 4, 'the hanging endpoint holds its 4 connection slots, no more');
      assert.equal(new Set(hits.map((x) => bodyJson(x).data.description)).size, 20);
      await apiCall(iso, 'PATCH', `/v1/webhooks/endpoints/${h.id}`, t.adminToken, { enabled: false });
    } finally {
      await stuck.close();
    }
  });

  it('keeps a hanging endpoint from delaying another endpoint on the same origin (same host and port, other path)', async () => {
    const t = await newTenant(iso);
    const shared = await Receiver.start(tls);
    try {
      shared.on('/stuck', () => 'hang');
      const h = await createEndpoint(iso, t.adminToken, { name: 'hangs', url: shared.url('/stuck') });
      await createEndpoint(iso, t.adminToken, { name: 'healthy', url: shared.url('/healthy') });
      for (let i = 0; i < 10; i++) await createSignal(iso, t.agentKey, { description: `signal ${i}` });
      await shared.waitForHits('/healthy', 10, 25_000);
      const hung = await listDeliveries(iso, t.adminToken, h.id);
      assert.ok(
        hung.every((x: Loose) => x.attempts === 0),
        'the healthy endpoint waited for the hanging one to time out: endpoints on one origin share one connection pool',
      );
      await apiCall(iso, 'PATCH', `/v1/webhooks/endpoints/${h.id}`, t.adminToken, { enabled: false });
    } finally {
      await shared.close();
    }
  });

  it("records other endpoints' outcomes when an endpoint is deleted while its attempt is in flight", async () => {
    const t = await newTenant(iso);
    let release: () => void = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    const pa = path('held-deleted');
    const pb = path('held-kept');
    const held = async () => {
      await released;
      return { status: 200 };
    };
    receiver.on(pa, held).on(pb, held);
    const a = await createEndpoint(iso, t.adminToken, { url: receiver.url(pa) });
    const b = await createEndpoint(iso, t.adminToken, { url: receiver.url(pb) });
    await createSignal(iso, t.agentKey);
    await receiver.waitForHits(pa, 1);
    await receiver.waitForHits(pb, 1);
    const kept = await onlyDelivery(iso, t.adminToken, b.id);
    assert.equal((await apiCall(iso, 'DELETE', `/v1/webhooks/endpoints/${a.id}`, t.adminToken)).status, 204);
    release(); // both answer 200 at once: their outcomes are written together
    const d = await waitForDelivery(iso, t.adminToken, kept.id, (x) => x.state === 'succeeded', 'to succeed', 15_000);
    assert.equal(d.attempts, 1);
    assert.equal(receiver.hitsFor(pb).length, 1);
  });
});

describe('manual actions', () => {
  let t: Tenant;
  let member: string;
  before(async () => {
    t = await newTenant(server);
    member = await addUserToken(server, t.tenantId, 'member');
  });

  it('redelivers a delivered signal on request with the same Guard-Delivery and a fresh timestamp', async () => {
    const p = path('redeliver');
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(p) });
    await createSignal(server, t.agentKey);
    const [first] = await receiver.waitForHits(p, 1);
    const id = first.headers['guard-delivery'] as string;
    await waitForDelivery(server, t.adminToken, id, (x) => x.state === 'succeeded', 'to succeed');
    assertError(await apiCall(server, 'POST', `/v1/webhooks/deliveries/${id}/redeliver`, member), 403);
    await sleep(20);
    const res = await apiCall(server, 'POST', `/v1/webhooks/deliveries/${id}/redeliver`, t.adminToken);
    assert.equal(res.status, 202, res.text);
    assert.equal(res.json.id, id);
    const [, second] = await receiver.waitForHits(p, 2);
    assert.equal(second.headers['guard-delivery'], id);
    assert.ok(Date.parse(bodyJson(second).timestamp) > Date.parse(bodyJson(first).timestamp));
    assert.equal(bodyJson(second).data.signal_id, bodyJson(first).data.signal_id);
    assert.equal(constructEvent(second.body, second.headers, e.secret).data.signal_id, bodyJson(first).data.signal_id);
    const d = await waitForDelivery(server, t.adminToken, id, (x) => x.attempt_log.length === 2, 'two attempts');
    assert.equal(d.state, 'succeeded');
    assertError(await apiCall(server, 'POST', '/v1/webhooks/deliveries/nope/redeliver', t.adminToken), 404);
  });

  it('sends a test event on request that arrives signed and parses with the SDK', async () => {
    const p = path('test-event');
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(p), headers: { 'X-Env': 'staging' } });
    assertError(await apiCall(server, 'POST', `/v1/webhooks/endpoints/${e.id}/test`, member), 403);
    const res = await apiCall(server, 'POST', `/v1/webhooks/endpoints/${e.id}/test`, t.adminToken);
    assert.equal(res.status, 202, res.text);
    const [hit] = await receiver.waitForHits(p, 1);
    assert.equal(hit.headers['guard-delivery'], res.json.delivery_id);
    assert.equal(hit.headers['guard-event'], 'signal_created');
    assert.equal(hit.headers['x-env'], 'staging');
    assert.ok(independentlyVerified(hit.body, hit.headers['guard-signature'] as string, e.secret));
    const event = constructEvent(hit.body, hit.headers, e.secret);
    assert.equal(event.event_type, 'signal_created');
    assert.equal(event.tenant_id, t.tenantId);
    assert.equal(event.data.signal_id, res.json.signal_id);
    assert.ok(Number.isInteger(event.data.severity) && event.data.severity >= 1 && event.data.severity <= 5);
    const d = await waitForDelivery(server, t.adminToken, res.json.delivery_id, (x) => x.state === 'succeeded', 'ok');
    assert.equal(d.endpoint_id, e.id);
    const other = await createEndpoint(server, t.adminToken, { url: receiver.url(path('not-tested')) });
    assert.equal((await listDeliveries(server, t.adminToken, other.id)).length, 0, 'only the tested endpoint');
  });
});

describe('POST /v1/signals validation', () => {
  let t: Tenant;
  let endpointId = '';
  const p = path('validation');
  before(async () => {
    t = await newTenant(server);
    endpointId = (await createEndpoint(server, t.adminToken, { url: receiver.url(p) })).id;
  });

  for (const severity of [0, 6, 2.5, '3', -1, null, true]) {
    it(`refuses severity ${JSON.stringify(severity)} with 400`, async () => {
      assertError(await postSignal(server, t.agentKey, { severity }), 400);
    });
  }

  it('accepts every severity from 1 to 5', async () => {
    for (const severity of [1, 2, 3, 4, 5])
      assert.equal((await postSignal(server, t.agentKey, { severity })).status, 201);
    await receiver.waitForHits(p, 5);
  });

  it('refuses a description over 4096 characters, and an empty one', async () => {
    assertError(await postSignal(server, t.agentKey, { description: 'd'.repeat(4097) }), 400);
    assertError(await postSignal(server, t.agentKey, { description: '' }), 400);
    assert.equal((await postSignal(server, t.agentKey, { description: 'd'.repeat(4096) })).status, 201);
    // Delivered before the next test counts what arrives (five before, this one the sixth).
    await receiver.waitForHits(p, 6);
  });

  it('refuses missing fields, unknown fields and a bad created_at', async () => {
    const { severity: _, ...noSeverity } = SIGNAL;
    assertError(await apiCall(server, 'POST', '/v1/signals', t.agentKey, noSeverity), 400);
    assertError(await postSignal(server, t.agentKey, { tenant_id: 'someone-else' }), 400);
    assertError(await postSignal(server, t.agentKey, { created_at: 'yesterday' }), 400);
    assertError(await postSignal(server, t.agentKey, { signal_type: 'Bad Type' }), 400);
  });

  it('takes only agent keys: a user token gets 403 and no token 401', async () => {
    assertError(await postSignal(server, t.adminToken), 403);
    assertError(await apiCall(server, 'POST', '/v1/signals', undefined, SIGNAL), 401);
  });

  it('delivers nothing for refused signals', async () => {
    const before = receiver.hitsFor(p).length;
    assertError(await postSignal(server, t.agentKey, { severity: 9 }), 400);
    // A delivery, had the refused signal made one, is made before this returns.
    await waitForDeliveriesMade(server, [endpointId]);
    assert.equal(receiver.hitsFor(p).length, before);
  });
});

describe('metrics', () => {
  it('exposes deliveries by outcome, attempt durations, queue depth and the age of the oldest due delivery', async () => {
    const t = await newTenant(server);
    const depth = (m: Map<string, number>, state: string) => m.get(`guard_webhook_queue_depth{state="${state}"}`) ?? 0;
    let m0 = await scrapeMetrics(server);
    await waitFor(async () => {
      m0 = await scrapeMetrics(server);
      return depth(m0, 'pending') === 0 && depth(m0, 'delivering') === 0;
    }, 'earlier deliveries to settle');
    const ok = path('metrics-ok');
    await createEndpoint(server, t.adminToken, { url: receiver.url(ok) });
    await createSignal(server, t.agentKey);
    await receiver.waitForHits(ok, 1);
    const delta = (m: Map<string, number>, k: string) => (m.get(k) ?? 0) - (m0.get(k) ?? 0);
    let m1 = m0;
    await waitFor(async () => {
      m1 = await scrapeMetrics(server);
      return delta(m1, 'guard_webhook_deliveries_total{outcome="succeeded"}') > 0;
    }, 'the succeeded counter to count the delivery');
    assert.equal(delta(m1, 'guard_webhook_deliveries_total{outcome="succeeded"}'), 1);
    assert.equal(delta(m1, 'guard_webhook_attempt_duration_seconds_count'), 1);
    const took = delta(m1, 'guard_webhook_attempt_duration_seconds_sum');
    assert.ok(took > 0 && took < 1, `attempt took ${took} s`);
    assert.ok(m1.has('guard_webhook_attempt_duration_seconds_bucket{le="+Inf"}'));

    // A hanging endpoint with more deliveries than its 4 connection slots: 4 in flight, 2 due and
    // waiting. On a server of its own with a 5 s attempt timeout: the main one's 1 s could end an
    // attempt before the scrape on a loaded machine.
    const stuck = await Receiver.start(tls);
    const hangServer = await startWebhookServer({ caPem: tls.caPem, flags: { 'webhook-timeout-ms': '5000' } });
    try {
      stuck.on('/stuck', () => 'hang');
      const t2 = await newTenant(hangServer);
      const h = await createEndpoint(hangServer, t2.adminToken, { url: stuck.url('/stuck') });
      const depth = (m: Map<string, number>, state: string) =>
        m.get(`guard_webhook_queue_depth{state="${state}"}`) ?? 0;
      const base = await scrapeMetrics(hangServer);
      for (let i = 0; i < 6; i++) await createSignal(hangServer, t2.agentKey);
      await stuck.waitForHits('/stuck', 4);
      let m2 = base;
      await waitFor(async () => {
        m2 = await scrapeMetrics(hangServer);
        return (
          depth(m2, 'delivering') - depth(base, 'delivering') === 4 &&
          (m2.get('guard_webhook_oldest_due_seconds') ?? 0) >= 0.1
        );
      }, 'four attempts in flight for a tenth of a second');
      assert.equal(depth(m2, 'delivering') - depth(base, 'delivering'), 4, 'four attempts in flight');
      assert.equal(depth(m2, 'pending') - depth(base, 'pending'), 2, 'two due deliveries waiting for a slot');
      const age = m2.get('guard_webhook_oldest_due_seconds') ?? -1;
      assert.ok(age >= 0.1 && age < 30, `oldest due delivery is ${age} s old`);
      await apiCall(hangServer, 'PATCH', `/v1/webhooks/endpoints/${h.id}`, t2.adminToken, { enabled: false });
      // Disabling failed the two waiting deliveries at once (no attempt, so not counted); the
      // four attempts in flight time out and are failed without a retry. The queue's depth is
      // the database's, and the counters move once the worker has the outcomes' commit back: a
      // scrape in between sees the queue drained with a failure still uncounted, so the wait
      // is for both.
      const counted = (m: Map<string, number>, k: string) => (m.get(k) ?? 0) - (base.get(k) ?? 0);
      const failed = 'guard_webhook_deliveries_total{outcome="failed"}';
      let m3 = m2;
      await waitFor(
        async () => {
          m3 = await scrapeMetrics(hangServer);
          return (
            depth(m3, 'delivering') === depth(base, 'delivering') &&
            depth(m3, 'pending') === depth(base, 'pending') &&
            counted(m3, failed) >= 4
          );
        },
        'the queue to drain and its four failures to be counted (the 5 s attempt timeout)',
        30_000,
      );
      assert.equal(m3.get('guard_webhook_oldest_due_seconds'), base.get('guard_webhook_oldest_due_seconds'));
      assert.equal(counted(m3, 'guard_webhook_deliveries_total{outcome="retrying"}'), 0, 'no retry once disabled');
      assert.equal(counted(m3, failed), 4, 'the timed-out attempts');
    } finally {
      await hangServer.close();
      await stuck.close();
    }
  });
});

describe('automatic disabling (webhook-disable-after 60 s, clock moved)', () => {
  let slow: WebhookServer;
  before(async () => {
    slow = await startWebhookServer({
      caPem: tls.caPem,
      flags: { 'webhook-retry-schedule': '0,1h', 'webhook-disable-after': '60' },
    });
  });
  after(async () => {
    await slow?.close();
  });

  it('disables an endpoint failing for longer than the window, records why, and fails its pending deliveries', async () => {
    const t = await newTenant(slow);
    const p = path('always-500');
    receiver.on(p, () => ({ status: 500 }));
    const e = await createEndpoint(slow, t.adminToken, { url: receiver.url(p) });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      await createSignal(slow, t.agentKey);
      const hits = await receiver.waitForHits(p, i + 1);
      ids.push(hits[i].headers['guard-delivery'] as string);
      await waitForDelivery(slow, t.adminToken, ids[i], (x) => x.attempts === 1 && x.state === 'pending', 'a retry');
    }
    const failing = await apiCall(slow, 'GET', `/v1/webhooks/endpoints/${e.id}`, t.adminToken);
    assert.equal(failing.json.enabled, true, 'still inside the window');
    assert.match(failing.json.failing_since, ISO_UTC);

    slow.clock.advance(61_000);
    await createSignal(slow, t.agentKey);
    const hits = await receiver.waitForHits(p, 3);
    ids.push(hits[2].headers['guard-delivery'] as string);
    let ep: Loose;
    await waitFor(async () => {
      ep = (await apiCall(slow, 'GET', `/v1/webhooks/endpoints/${e.id}`, t.adminToken)).json;
      return ep.enabled === false;
    }, 'the endpoint to be disabled');
    assert.match(ep.disabled_reason, /automatically/);
    assert.match(ep.disabled_reason, /500/);
    for (const id of ids) {
      const d = await getDelivery(slow, t.adminToken, id);
      assert.equal(d.state, 'failed', JSON.stringify(d));
      assert.match(d.last_error, /disabled/);
    }
    assert.equal((await createSignal(slow, t.agentKey)).deliveries, 0);
    await waitForDeliveriesMade(slow, [e.id]);
    assert.equal(receiver.hitsFor(p).length, 3);
    assertError(await apiCall(slow, 'POST', `/v1/webhooks/deliveries/${ids[0]}/redeliver`, t.adminToken), 400);
    const on = await apiCall(slow, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, { enabled: true });
    assert.equal(on.json.enabled, true);
    assert.equal(on.json.disabled_reason, null);
    assert.equal(on.json.failing_since, null);
  });
});

describe('410 Gone (Standard Webhooks)', () => {
  it('disables the endpoint at once, saying why, audited; the delivery fails without a retry', async () => {
    const t = await newTenant(server);
    const p = path('gone');
    receiver.on(p, () => ({ status: 410, body: '{"error":"gone"}' }));
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(p) });
    await createSignal(server, t.agentKey);
    const [hit] = await receiver.waitForHits(p, 1);
    let ep: Loose;
    await waitFor(async () => {
      ep = (await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, t.adminToken)).json;
      return ep.enabled === false;
    }, 'the endpoint to be disabled');
    assert.match(ep.disabled_reason, /410 Gone/);
    const d = await waitForDelivery(
      server,
      t.adminToken,
      hit.headers['guard-delivery'] as string,
      (x) => x.state === 'failed',
      'to fail',
    );
    assert.equal(d.attempts, 1);
    assert.equal(d.last_status, 410);
    const audit = await apiCall(server, 'GET', '/v1/audit?limit=50', t.adminToken);
    assert.deepEqual(
      audit.json.entries.filter((a: Loose) => a.target === e.id).map((a: Loose) => a.action),
      ['webhook_endpoint.disabled'],
    );
    assert.equal((await createSignal(server, t.agentKey)).deliveries, 0);
    assert.equal(receiver.hitsFor(p).length, 1);
  });
});

describe('disabling an endpoint by hand (retry schedule 0, 1 h)', () => {
  let slow: WebhookServer;
  before(async () => {
    // A long attempt timeout: the attempt held in flight stays in flight however loaded the machine.
    slow = await startWebhookServer({
      caPem: tls.caPem,
      flags: { 'webhook-retry-schedule': '0,1h', 'webhook-timeout-ms': '30000' },
    });
  });
  after(async () => {
    await slow?.close();
  });

  it('fails its pending deliveries at once, records an attempt in flight without a retry, and gives signals created meanwhile no delivery', async () => {
    const t = await newTenant(slow);
    const p = path('disabled-by-hand');
    let release: (() => void) | undefined;
    const released = new Promise<void>((r) => {
      release = r;
    });
    receiver.on(p, async (_hit, nth) => {
      if (nth === 2) await released; // the second delivery's attempt is in flight until released
      return { status: nth <= 2 ? 500 : 200 };
    });
    const e = await createEndpoint(slow, t.adminToken, { url: receiver.url(p) });
    await createSignal(slow, t.agentKey);
    const pending = (await receiver.waitForHits(p, 1))[0].headers['guard-delivery'] as string;
    await waitForDelivery(slow, t.adminToken, pending, (d) => d.state === 'pending' && d.attempts === 1, 'a retry');
    await createSignal(slow, t.agentKey);
    const inFlight = (await receiver.waitForHits(p, 2))[1].headers['guard-delivery'] as string;

    const off = await apiCall(slow, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, { enabled: false });
    assert.equal(off.status, 200, off.text);
    const failed = await getDelivery(slow, t.adminToken, pending);
    assert.equal(
      failed.state,
      'failed',
      'a pending retry is failed when the endpoint is disabled, not when it falls due',
    );
    assert.match(failed.last_error, /disabled/);
    assert.equal(failed.next_attempt_at, null);
    assert.equal((await getDelivery(slow, t.adminToken, inFlight)).state, 'delivering');

    release?.();
    const done = await waitForDelivery(slow, t.adminToken, inFlight, (d) => d.state !== 'delivering', 'the attempt');
    assert.equal(done.state, 'failed', 'no retry is scheduled for a disabled endpoint');
    assert.equal(done.attempt_log.length, 1);
    assert.equal(done.attempt_log[0].status, 500);
    assert.equal((await createSignal(slow, t.agentKey)).deliveries, 0, 'a signal created while disabled');

    const on = await apiCall(slow, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, { enabled: true });
    assert.equal(on.status, 200, on.text);
    assert.deepEqual(
      (await listDeliveries(slow, t.adminToken, e.id)).map((d) => d.state),
      ['failed', 'failed'],
      're-enabling resumes nothing by itself',
    );
    await createSignal(slow, t.agentKey);
    await receiver.waitForHits(p, 3);
    const again = await apiCall(slow, 'POST', `/v1/webhooks/deliveries/${pending}/redeliver`, t.adminToken);
    assert.equal(again.status, 202, again.text);
    const [, , , redelivered] = await receiver.waitForHits(p, 4);
    assert.equal(redelivered.headers['guard-delivery'], pending);
  });
});

describe('SSRF guard (webhook-allow-private off)', () => {
  let strict: WebhookServer;
  let v6: Receiver;
  before(async () => {
    strict = await startWebhookServer({ caPem: tls.caPem, flags: { 'webhook-allow-private': false } });
    v6 = await Receiver.start(tls, '::1');
  });
  after(async () => {
    await strict?.close();
    await v6?.close();
  });

  it('refuses non-public IP-literal URLs on create and on edit with 400 blocked_address, naming the range and the development flag', async () => {
    const t = await newTenant(strict);
    const cases: [string, RegExp][] = [
      [receiver.url('/ssrf-v4'), /127\.0\.0\.1.*loopback/],
      [v6.url('/ssrf-v6'), /::1.*loopback/],
      ['https://10.0.0.1/hook', /10\.0\.0\.1.*private/],
      ['https://169.254.169.254/latest/meta-data/', /169\.254\.169\.254.*metadata/],
      [`https://[::ffff:127.0.0.1]:${receiver.port}/ssrf-mapped`, /loopback/],
      [`https://2130706433:${receiver.port}/ssrf-decimal`, /127\.0\.0\.1.*loopback/],
      ['https://192.0.2.1/hook', /documentation/],
      ['https://198.51.100.1/hook', /documentation/],
      ['https://203.0.113.1/hook', /documentation/],
      [`https://[::127.0.0.1]:${receiver.port}/ssrf-compat`, /loopback.*embedded as 127\.0\.0\.1/],
      [`https://[::ffff:0:7f00:1]:${receiver.port}/ssrf-siit`, /loopback.*embedded as 127\.0\.0\.1/],
      [`https://[2002:7f00:1::]:${receiver.port}/ssrf-6to4`, /loopback.*embedded as 127\.0\.0\.1/],
    ];
    // A name is accepted when written (it is checked on every connection): the edits start from one.
    const named = await createEndpoint(strict, t.adminToken, { url: receiver.localhostUrl('/ssrf-edit') });
    for (const [url, why] of cases) {
      const created = await apiCall(strict, 'POST', '/v1/webhooks/endpoints', t.adminToken, { name: 'ssrf', url });
      assertError(created, 400, 'blocked_address');
      assert.match(created.json.error.message, why, url);
      assert.match(created.json.error.message, /--webhook-allow-private/, url);
      const edited = await apiCall(strict, 'PATCH', `/v1/webhooks/endpoints/${named.id}`, t.adminToken, { url });
      assertError(edited, 400, 'blocked_address');
      assert.match(edited.json.error.message, why, url);
    }
    const list = await apiCall(strict, 'GET', '/v1/webhooks/endpoints', t.adminToken);
    assert.deepEqual(
      list.json.endpoints.map((e: Loose) => e.url),
      [receiver.localhostUrl('/ssrf-edit')],
      'nothing was created and the edits changed nothing',
    );
    const public4 = await apiCall(strict, 'POST', '/v1/webhooks/endpoints', t.adminToken, {
      name: 'public literal',
      url: 'https://93.184.215.14/hook',
    });
    assert.equal(public4.status, 201, public4.text);
    // No signal is ever created for this tenant: nothing is sent to the public address.
    assert.equal(
      (await apiCall(strict, 'DELETE', `/v1/webhooks/endpoints/${public4.json.id}`, t.adminToken)).status,
      204,
    );
    // With --webhook-allow-private (the main test server) the same literals are accepted.
    const dev = await newTenant(server);
    for (const [url] of cases) {
      const res = await apiCall(server, 'POST', '/v1/webhooks/endpoints', dev.adminToken, { name: 'dev', url });
      assert.equal(res.status, 201, `${url}: ${res.text}`);
      await apiCall(server, 'DELETE', `/v1/webhooks/endpoints/${res.json.id}`, dev.adminToken);
    }
  });

  it('refuses every attempt to a name resolving to a non-public address, or to a literal stored before the check, before connecting, naming the address and the development flag', async () => {
    const t = await newTenant(strict);
    const cases: [string, RegExp][] = [
      [receiver.localhostUrl('/ssrf-name'), /localhost \(127\.0\.0\.1\).*loopback/],
      [receiver.url('/ssrf-legacy-v4'), /127\.0\.0\.1.*loopback/],
      [v6.url('/ssrf-legacy-v6'), /::1.*loopback/],
      [`https://[::ffff:0:7f00:1]:${receiver.port}/ssrf-legacy-siit`, /loopback.*embedded as 127\.0\.0\.1/],
    ];
    const endpoints = [];
    for (const [url] of cases) {
      const e = await createEndpoint(strict, t.adminToken, { url: receiver.localhostUrl('/ssrf-placeholder') });
      // An endpoint written by an earlier release, before IP literals were checked on write.
      await strict.deps.db.updateTable('webhook_endpoints').set({ url }).where('id', '=', e.id).execute();
      endpoints.push(e.id);
    }
    assert.equal((await createSignal(strict, t.agentKey)).deliveries, cases.length);
    for (const [i, id] of endpoints.entries()) {
      const d0 = await onlyDelivery(strict, t.adminToken, id);
      const d = await waitForDelivery(
        strict,
        t.adminToken,
        d0.id,
        (x) => x.state === 'failed',
        `${cases[i][0]} to fail`,
      );
      assert.equal(d.attempt_log.length, 3);
      for (const a of d.attempt_log) {
        assert.equal(a.status, null);
        assert.match(a.error, /refused/);
        assert.match(a.error, cases[i][1]);
        assert.match(a.error, /--webhook-allow-private/);
      }
    }
    assert.deepEqual(
      receiver.hits.filter((h) => h.path.startsWith('/ssrf')),
      [],
    );
    assert.equal(v6.hits.length, 0);
  });
});
