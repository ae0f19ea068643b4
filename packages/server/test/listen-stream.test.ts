// GET /v1/webhooks/listen and POST /v1/webhooks/listen/trigger (issue 21, item 6) against the
// real server on loopback (SQLite, or PostgreSQL in the second pass): the stream as an SSE
// client reads it. The CLI that uses them has its own suite (packages/listen/test).
//
// "Never arrives" is shown by order, not by waiting: the hub offers a tenant's rows to its
// streams in (received_at, id) order, so once a later row has arrived an earlier one that was
// going to arrive has; the clock moves a millisecond between the two so that their order is
// certain. Where nothing later can come, the end of the stream (`bye` on shutdown) is the mark.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EVENT_TYPES } from '@guard/contract/endpoint-rules';
import type { SseMessage } from '../../listen/src/sse-parser.ts';
import { SseClient } from '../../listen/test/sse-client.ts';
import { resolvePrincipal, stillAuthorised, type UserPrincipal } from '../src/auth/index.ts';
import { api, type Loose } from './harness.ts';
import { makeTestTls, type TestTls } from './loopback.ts';
import {
  addUserToken,
  createEndpoint,
  createSignal,
  newTenant,
  Receiver,
  startWebhookServer,
  type Tenant,
  type WebhookServer,
} from './webhook-harness.ts';

const json = (m: SseMessage): Loose => JSON.parse(m.data);

async function trigger(server: WebhookServer, token: string, body: Record<string, unknown> = {}) {
  return api(server.url, 'POST', '/v1/webhooks/listen/trigger', {
    token,
    body: { event_type: 'signal_created', ...body },
  });
}

async function triggered(server: WebhookServer, token: string): Promise<string> {
  const res = await trigger(server, token);
  assert.equal(res.status, 201, res.text);
  return res.json.signal_id;
}

describe('GET /v1/webhooks/listen', () => {
  let tls: TestTls;
  let server: WebhookServer;
  let a: Tenant;
  let b: Tenant;
  const clients: SseClient[] = [];
  const connect = async (token: string, options: { events?: string; lastEventId?: string } = {}) => {
    const c = await SseClient.connect(server.url, { token, ...options });
    clients.push(c);
    return c;
  };

  before(async () => {
    tls = await makeTestTls();
    server = await startWebhookServer({ caPem: tls.caPem });
    a = await newTenant(server);
    b = await newTenant(server);
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.close();
  });

  it('streams each new signal of the tenant as its delivery body: id the signal id, event its Guard-Event', async () => {
    const stream = await connect(a.adminToken);
    const ready = json(await stream.waitFor((m) => m.event === 'ready', 'ready'));
    assert.equal(ready.tenant_id, a.tenantId);
    assert.deepEqual(ready.events, [...EVENT_TYPES]);
    assert.equal(ready.resumed_from, null);
    assert.equal(typeof ready.heartbeat_seconds, 'number');
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(stream.headers.get('cache-control'), 'no-store');

    const s = await createSignal(server, a.agentKey, { severity: 5 });
    const m = await stream.waitFor((x) => x.lastEventId === s.signal_id, 'the signal');
    assert.equal(m.event, 'signal_created');
    const envelope = json(m);
    assert.deepEqual(Object.keys(envelope), ['event_type', 'version', 'timestamp', 'tenant_id', 'data', 'console_url']);
    assert.equal(envelope.event_type, 'signal_created');
    assert.equal(envelope.version, 'v1');
    assert.equal(envelope.tenant_id, a.tenantId);
    assert.equal(envelope.data.signal_id, s.signal_id);
    assert.equal(envelope.data.severity, 5);
    assert.equal(envelope.data.server_name, a.hostname);
    assert.equal(envelope.data.environment, a.environment);
    assert.equal(envelope.console_url, `${server.url}/console/signals/${s.signal_id}`);
    assert.ok(!Number.isNaN(Date.parse(envelope.timestamp)));
  });

  it("never carries another tenant's events", async () => {
    const stream = await connect(a.adminToken);
    const theirs = await createSignal(server, b.agentKey);
    server.clock.advance(1);
    const ours = await createSignal(server, a.agentKey);
    await stream.waitFor((m) => m.lastEventId === ours.signal_id, 'our signal');
    assert.deepEqual(
      stream.events().map((m) => m.lastEventId),
      [ours.signal_id],
    );
    assert.ok(!stream.received.some((m) => m.data.includes(theirs.signal_id)));
  });

  it('refuses an unknown event type (400 unknown_event_type), naming it', async () => {
    const { status, json: body } = await SseClient.open(server.url, {
      token: a.adminToken,
      events: 'signal_created,nope',
    });
    assert.equal(status, 400);
    assert.equal((body as Loose).error.code, 'unknown_event_type');
    assert.match((body as Loose).error.message, /"nope"/);
  });

  it('refuses no credentials (401) and an agent key, a member and support staff (403)', async () => {
    assert.equal((await SseClient.open(server.url)).status, 401);
    assert.equal((await SseClient.open(server.url, { token: 'gut_not_a_token_we_issued' })).status, 401);
    assert.equal((await SseClient.open(server.url, { token: a.agentKey })).status, 403);
    const member = await addUserToken(server, a.tenantId, 'member');
    const refused = await SseClient.open(server.url, { token: member });
    assert.equal(refused.status, 403);
    assert.match((refused.json as Loose).error.message, /admin/);
    const support = await addUserToken(server, null, 'support');
    assert.equal((await SseClient.open(server.url, { token: support })).status, 403);
  });

  it('resumes after Last-Event-ID: the events since come first, not that one; an unknown id is told as a gap', async () => {
    const t = await newTenant(server);
    const first = await connect(t.adminToken);
    const s1 = await createSignal(server, t.agentKey);
    await first.waitFor((m) => m.lastEventId === s1.signal_id, 's1');
    first.close();
    await first.ended;
    const s2 = await createSignal(server, t.agentKey);
    const s3 = await triggered(server, t.adminToken);

    const resumed = await connect(t.adminToken, { lastEventId: s1.signal_id });
    assert.equal(json(resumed.received[0]).resumed_from, s1.signal_id);
    // s4 comes by the live feed, which reads the last seconds again: s1 to s3 are not repeated.
    const s4 = await triggered(server, t.adminToken);
    await resumed.waitFor((m) => m.lastEventId === s4, 's4');
    assert.deepEqual(
      resumed.events().map((m) => m.lastEventId),
      [s2.signal_id, s3, s4],
    );
    assert.ok(!resumed.received.some((m) => m.event === 'gap'));

    const unknown = await connect(t.adminToken, { lastEventId: 'sig_0000000000000000000000000000000a' });
    assert.equal(json(unknown.received[0]).resumed_from, null);
    const gap = await unknown.waitFor((m) => m.event === 'gap', 'the gap notice');
    assert.match(json(gap).message, /may have been missed/);
    assert.equal(unknown.events().length, 0);

    // Another tenant's event id is no place to resume from either.
    const theirs = await createSignal(server, b.agentKey);
    const foreign = await connect(t.adminToken, { lastEventId: theirs.signal_id });
    await foreign.waitFor((m) => m.event === 'gap', 'the gap notice');
    assert.equal(foreign.events().length, 0);
  });

  it('holds at most 10 streams per tenant: the 11th is 429 too_many_streams with Retry-After', async () => {
    const t = await newTenant(server);
    const open: SseClient[] = [];
    for (let i = 0; i < 10; i++) open.push(await connect(t.adminToken));
    const refused = await SseClient.open(server.url, { token: t.adminToken });
    assert.equal(refused.status, 429);
    assert.equal((refused.json as Loose).error.code, 'too_many_streams');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    // Another tenant is not held back by this one.
    const other = await connect(b.adminToken);
    other.close();
    for (const c of open) c.close();
  });
});

describe("a stream's credential, checked again while it is open", () => {
  it('holds while the token and the admin role do; not once the token is revoked or its user is no longer admin', async () => {
    const tls = await makeTestTls();
    const server = await startWebhookServer({ caPem: tls.caPem });
    try {
      const t = await newTenant(server);
      const made = async () => {
        const res = await api(server.url, 'POST', '/v1/me/tokens', { token: t.adminToken, body: { name: 'laptop' } });
        assert.equal(res.status, 201, res.text);
        const principal = await resolvePrincipal(
          { db: server.deps.db, now: server.clock.now, agentKeys: async () => undefined },
          `Bearer ${res.json.token}`,
        );
        assert.equal(principal?.kind, 'user');
        return principal as UserPrincipal;
      };
      const check = (p: UserPrincipal) => stillAuthorised(server.deps.db, p, ['admin'], server.clock.now());
      const revoked = await made();
      const demoted = await made();
      assert.equal(await check(revoked), true);
      const del = await api(server.url, 'DELETE', `/v1/me/tokens/${revoked.tokenId}`, { token: t.adminToken });
      assert.equal(del.status, 204, del.text);
      assert.equal(await check(revoked), false);
      assert.equal(await check(demoted), true);
      // The user made a member (as PATCH /v1/users/{id} does).
      await server.deps.db.updateTable('users').set({ role: 'member' }).where('id', '=', demoted.userId).execute();
      assert.equal(await check(demoted), false);
    } finally {
      await server.close();
    }
  });
});

describe('GET /v1/webhooks/listen: filters and shutdown', () => {
  it('carries only the event types named (a triggered event counts as signal_created and as test), and ends each stream with bye when the server closes', async () => {
    const tls = await makeTestTls();
    const server = await startWebhookServer({ caPem: tls.caPem });
    try {
      const t = await newTenant(server);
      const signals = await SseClient.connect(server.url, { token: t.adminToken, events: 'signal_created' });
      const tests = await SseClient.connect(server.url, { token: t.adminToken, events: 'test' });
      const failing = await SseClient.connect(server.url, {
        token: t.adminToken,
        events: 'endpoint.failing,endpoint.disabled',
      });
      assert.deepEqual(json(failing.received[0]).events, ['endpoint.failing', 'endpoint.disabled']);
      const s = await createSignal(server, t.agentKey);
      server.clock.advance(1);
      const trig = await triggered(server, t.adminToken);
      await signals.waitFor((m) => m.lastEventId === trig, 'the triggered event (signal_created)');
      await tests.waitFor((m) => m.lastEventId === trig, 'the triggered event (test)');

      const closing = server.close();
      for (const c of [signals, tests, failing]) await c.ended;
      await closing;
      const ids = (c: SseClient) => c.events().map((m) => m.lastEventId);
      assert.deepEqual(ids(signals), [s.signal_id, trig]);
      assert.deepEqual(ids(tests), [trig]);
      assert.deepEqual(ids(failing), []);
      for (const c of [signals, tests, failing]) {
        const last = c.received[c.received.length - 1];
        assert.equal(last.event, 'bye');
        assert.equal(json(last).reason, 'shutdown');
      }
    } finally {
      await server.close();
    }
  });
});

describe('POST /v1/webhooks/listen/trigger', () => {
  let tls: TestTls;
  let server: WebhookServer;
  let receiver: Receiver;
  let t: Tenant;

  before(async () => {
    tls = await makeTestTls();
    server = await startWebhookServer({ caPem: tls.caPem });
    receiver = await Receiver.start(tls);
    t = await newTenant(server);
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  it('makes a test signal_created event that listen streams receive, no endpoint receives and no signal list shows', async () => {
    await createEndpoint(server, t.adminToken, { url: receiver.url('/hook') });
    const stream = await SseClient.connect(server.url, { token: t.adminToken });
    const res = await trigger(server, t.adminToken, { severity: 4, signal_type: 'sudo_command_executed' });
    assert.equal(res.status, 201);
    assert.equal(res.json.event_type, 'signal_created');
    const m = await stream.waitFor((x) => x.lastEventId === res.json.signal_id, 'the triggered event');
    stream.close();
    assert.equal(m.event, 'signal_created');
    const envelope = json(m);
    assert.equal(envelope.data.severity, 4);
    assert.equal(envelope.data.signal_type, 'sudo_command_executed');
    assert.equal(envelope.data.environment, 'test');
    assert.equal(envelope.tenant_id, t.tenantId);

    const deliveries = await api(server.url, 'GET', `/v1/signals/${res.json.signal_id}/deliveries`, {
      token: t.adminToken,
    });
    assert.equal(deliveries.status, 200, deliveries.text);
    assert.deepEqual(deliveries.json.deliveries, []);
    const list = await api(server.url, 'GET', '/v1/signals', { token: t.adminToken });
    assert.ok(!list.json.signals.some((x: Loose) => x.signal_id === res.json.signal_id));
    assert.equal(receiver.hits.length, 0);
  });

  it('takes signal_created only, from admins only', async () => {
    assert.equal((await trigger(server, t.adminToken, { event_type: 'endpoint.failing' })).status, 400);
    assert.equal((await trigger(server, t.adminToken, { severity: 9 })).status, 400);
    assert.equal((await trigger(server, await addUserToken(server, t.tenantId, 'member'))).status, 403);
    assert.equal((await trigger(server, t.agentKey)).status, 403);
    assert.equal((await trigger(server, 'gut_not_a_token_we_issued')).status, 401);
  });
});
