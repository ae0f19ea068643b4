// Issue 14, items 2–5, end to end against real HTTPS receivers on loopback, on the run's
// engine (SQLite, or PostgreSQL in `npm test`'s second pass): subscriptions and filters,
// the per-endpoint rate limit, failing-endpoint alerts (operational events) with an
// accelerated disable window, and replay by filter — its dry-run count, the same
// Guard-Delivery, progress, cancelling, and live traffic's latency while 5,000 are replayed.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { constructGuardEvent, type GuardEvent } from '@guard/webhooks';
import { replayFeederPassed, waitForDeliveriesMade } from './delivery-waits.ts';
import { type Loose, sleep, waitFor } from './harness.ts';
import {
  addUserToken,
  apiCall,
  bodyJson,
  createEndpoint,
  createSignal,
  listDeliveries,
  makeTestTls,
  newTenant,
  postSignal,
  Receiver,
  seedDeliveries,
  startWebhookServer,
  type TestTls,
  type WebhookServer,
} from './webhook-harness.ts';

let tls: TestTls;
let receiver: Receiver;
let unique = 0;
const path = (label: string) => `/${label}-${++unique}`;

before(async () => {
  tls = await makeTestTls();
  receiver = await Receiver.start(tls);
});
after(async () => {
  await receiver?.close();
});

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

describe('subscriptions and filters', () => {
  let server: WebhookServer;
  before(async () => {
    server = await startWebhookServer({ caPem: tls.caPem });
  });
  after(() => server?.close());

  it('sends each signal only to the endpoints whose event types, minimum severity and signal types it matches', async () => {
    const t = await newTenant(server);
    const all = path('all');
    const severe = path('severe');
    const ssh = path('ssh');
    const ops = path('ops-only');
    const allEndpoint = await createEndpoint(server, t.adminToken, { url: receiver.url(all) });
    const severeEndpoint = await createEndpoint(server, t.adminToken, { url: receiver.url(severe), min_severity: 4 });
    const sshEndpoint = await createEndpoint(server, t.adminToken, {
      url: receiver.url(ssh),
      event_types: ['signal_created'],
      signal_types: ['ssh_login'],
    });
    const opsEndpoint = await createEndpoint(server, t.adminToken, {
      url: receiver.url(ops),
      event_types: ['endpoint.disabled'],
    });
    const sent = [
      { signal_type: 'sudo_command_executed', severity: 2 },
      { signal_type: 'sudo_command_executed', severity: 5 },
      { signal_type: 'ssh_login', severity: 1 },
      { signal_type: 'ssh_login', severity: 4 },
    ];
    const ids = [];
    for (const s of sent) ids.push((await createSignal(server, t.agentKey, s)).signal_id);
    // A signal's deliveries are written with it: once they are all made, nothing more arrives.
    await waitForDeliveriesMade(
      server,
      [allEndpoint, severeEndpoint, sshEndpoint, opsEndpoint].map((e) => e.id),
    );
    // The filter decides which signals reach an endpoint, not their order: an endpoint's
    // deliveries run on several connections at once, so they may arrive in any order.
    const got = (p: string) =>
      receiver
        .hitsFor(p)
        .map((h) => bodyJson(h).data.signal_id)
        .sort();
    assert.deepEqual(got(all), [...ids].sort());
    assert.deepEqual(got(severe), [ids[1], ids[3]].sort());
    assert.deepEqual(got(ssh), [ids[2], ids[3]].sort());
    assert.deepEqual(got(ops), [], 'an endpoint subscribed to operational events only gets no signal');

    const shown = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${sshEndpoint.id}`, t.adminToken);
    assert.deepEqual(
      [shown.json.event_types, shown.json.min_severity, shown.json.signal_types, shown.json.rate_limit],
      [['signal_created'], 1, ['ssh_login'], null],
    );
    const refused = await apiCall(server, 'POST', `/v1/webhooks/endpoints/${sshEndpoint.id}/test`, t.adminToken);
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error.code, 'not_subscribed', 'a test event needs the test subscription');
  });

  it('defaults to signal_created and test with no filter, and PATCH changes the filter for the next signal', async () => {
    const t = await newTenant(server);
    const p = path('patched');
    const e = (await createEndpoint(server, t.adminToken, { url: receiver.url(p) })) as Loose;
    assert.deepEqual([e.event_types, e.min_severity, e.signal_types], [['signal_created', 'test'], 1, null]);
    const patched = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, {
      min_severity: 5,
    });
    assert.equal(patched.status, 200, patched.text);
    await createSignal(server, t.agentKey, { severity: 4 });
    const five = await createSignal(server, t.agentKey, { severity: 5 });
    await waitForDeliveriesMade(server, [e.id]);
    assert.deepEqual(
      receiver.hitsFor(p).map((h) => bodyJson(h).data.signal_id),
      [five.signal_id],
    );
    // Each refusal says what is wrong in one sentence, the allowed values listed.
    const refusals: [object, string][] = [
      [{ event_types: [] }, 'body/event_types must NOT have fewer than 1 items'],
      [
        { event_types: ['nope'] },
        'body/event_types/0 must be one of "signal_created", "test", "endpoint.failing", "endpoint.disabled", "endpoint.certificate_expiring", "audit.event"',
      ],
      [{ min_severity: 6 }, 'body/min_severity must be <= 5'],
      [{ signal_types: ['A B'] }, 'body/signal_types/0 must match pattern "^[a-z0-9][a-z0-9_.-]*$"'],
      [{ rate_limit: -1 }, 'body/rate_limit must be >= 0.01, or null'],
      [{ rate_limit: 0.001 }, 'body/rate_limit must be >= 0.01, or null'],
      [{ rate_limit: 'fast' }, 'body/rate_limit must be number, or null'],
    ];
    for (const [bad, message] of refusals) {
      const r = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, bad);
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.deepEqual(r.json.error, { code: 'invalid_request', message });
    }
  });
});

describe('per-endpoint rate limit', () => {
  let server: WebhookServer;
  before(async () => {
    // A long attempt timeout: 40 TLS connections opened at once to a receiver in this (loaded)
    // process can take longer than the harness's 1 s to connect, and a failed attempt is not
    // what this test is about.
    server = await startWebhookServer({
      caPem: tls.caPem,
      flags: { 'webhook-endpoint-concurrency': '16', 'webhook-timeout-ms': '30000' },
    });
  });
  after(() => server?.close());

  it('holds attempts to the limit; the excess waits and none fails; other endpoints are not slowed', async () => {
    const t = await newTenant(server);
    const limited = path('limited');
    const free = path('free');
    const rate = 10;
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(limited), rate_limit: rate });
    await createEndpoint(server, t.adminToken, { url: receiver.url(free) });
    const n = 40;
    const t0 = Date.now();
    await Promise.all(Array.from({ length: n }, () => createSignal(server, t.agentKey)));
    const freeHits = await receiver.waitForHits(free, n, 30_000);
    const limitedHits = await receiver.waitForHits(limited, n, 60_000);
    // Not slowed: the free endpoint had all of them before the limited one (which needs ~4 s at
    // 10/s) had its last — an order, not a time, so a loaded machine cannot fail it.
    assert.ok(
      freeHits[n - 1].at < limitedHits[n - 1].at,
      `the endpoint without a limit waited behind the limited one (free done after ${freeHits[n - 1].at - t0} ms)`,
    );
    let list: Loose[] = [];
    await waitFor(async () => {
      list = await listDeliveries(server, t.adminToken, e.id);
      return list.every((d) => d.status !== 'pending');
    }, 'every outcome recorded');
    // The limit is on when attempts start: read their start times as the server recorded them
    // (arrivals at the receiver can bunch when a loaded machine delays sockets, not claims).
    const details = await Promise.all(
      list.map((d) => apiCall(server, 'GET', `/v1/webhooks/deliveries/${d.id}`, t.adminToken)),
    );
    const times = details.map((d) => Date.parse(d.json.attempt_log[0].started_at)).sort((a, b) => a - b);
    let maxPerSecond = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
      while (times[i] - times[j] >= 1000) j++;
      maxPerSecond = Math.max(maxPerSecond, i - j + 1);
    }
    // At most the rate plus its burst (1 at 10/s) within any second.
    assert.ok(maxPerSecond <= rate + 1, `${maxPerSecond} attempts started within one second at ${rate}/s`);
    const spanS = (times[n - 1] - times[0]) / 1000;
    assert.ok(spanS >= ((n - 1 - rate / 10) / rate) * 0.9, `${n} deliveries within ${spanS} s`);
    assert.equal(
      list.filter((d) => d.status === 'succeeded' && d.attempts === 1).length,
      n,
      `none failed or retried: ${JSON.stringify(details.filter((d) => d.json.attempts !== 1 || d.json.status !== 'succeeded').map((d) => d.json.attempt_log))}`,
    );
  });

  it('starts a changed limit afresh: raised from one per 100 s, the waiting delivery goes at once', async () => {
    const t = await newTenant(server);
    const p = path('raised');
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(p), rate_limit: 0.01 });
    await createSignal(server, t.agentKey);
    await receiver.waitForHits(p, 1);
    await createSignal(server, t.agentKey);
    // Nothing marks a delivery the limit holds (it stays pending, unclaimed): without the limit
    // it would be sent within a poll of the worker (20 ms).
    await sleep(300);
    assert.equal(receiver.hitsFor(p).length, 1, 'the second waits its 100 s');
    const patched = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, { rate_limit: 100 });
    assert.equal(patched.status, 200, patched.text);
    // Not the old bucket's 100 s: the next claim (the worker polls at least every second) sends it.
    await receiver.waitForHits(p, 2, 20_000);
  });
});

describe('failing-endpoint alerts (disable window 4 s, a signal every 100 ms)', () => {
  let server: WebhookServer;
  before(async () => {
    server = await startWebhookServer({
      caPem: tls.caPem,
      flags: { 'webhook-disable-after': '4', 'webhook-retry-schedule': '0' },
    });
  });
  after(() => server?.close());

  it('announces 50, 75 and 90 % once each and the disabling, signed, to the other subscribed endpoints only; audited', async () => {
    const t = await newTenant(server);
    const failing = path('failing');
    const watcher = path('watcher');
    const bystander = path('bystander');
    receiver.on(failing, () => ({ status: 503 }));
    const bad = await createEndpoint(server, t.adminToken, {
      name: 'SIEM',
      url: receiver.url(failing),
      event_types: ['signal_created', 'endpoint.failing', 'endpoint.disabled'],
    });
    const watch = await createEndpoint(server, t.adminToken, {
      url: receiver.url(watcher),
      event_types: ['endpoint.failing', 'endpoint.disabled'],
    });
    await createEndpoint(server, t.adminToken, { url: receiver.url(bystander) });
    const t0 = Date.now();
    let disabled = false;
    let seen: Loose | undefined;
    while (!disabled && Date.now() - t0 < 15_000) {
      await postSignal(server, t.agentKey);
      await sleep(100);
      const shown = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${bad.id}`, t.adminToken);
      if (shown.json.health.failure_streak > 3 && !seen) seen = shown.json;
      disabled = shown.json.enabled === false;
    }
    assert.ok(disabled, 'the endpoint was disabled within the window');
    assert.ok(seen, 'its health was readable while it failed');
    assert.equal(seen.health.disable_at, new Date(Date.parse(seen.failing_since) + 4000).toISOString());
    assert.ok(seen.health.success_rate === 0 && seen.health.failed > 0, JSON.stringify(seen.health));

    // The events are written with the outcomes that caused them, the last with the disabling:
    // once the watcher's deliveries are all made, nothing more arrives. They go on several
    // connections, so they are put in the order they happened, not the order they arrived.
    await waitForDeliveriesMade(server, [watch.id]);
    const happened = (e: GuardEvent) =>
      e.event_type === 'endpoint.failing'
        ? e.data.occurred_at
        : e.event_type === 'endpoint.disabled'
          ? e.data.disabled_at
          : '';
    const received = receiver
      .hitsFor(watcher)
      .map((hit) => ({ hit, event: constructGuardEvent(hit.body, hit.headers, watch.secret) }))
      .sort((a, b) => happened(a.event).localeCompare(happened(b.event)));
    const hits = received.map((r) => r.hit);
    const events: GuardEvent[] = received.map((r) => r.event);
    assert.deepEqual(
      events.map((e) => (e.event_type === 'endpoint.failing' ? `failing ${e.data.percent}` : e.event_type)),
      ['failing 50', 'failing 75', 'failing 90', 'endpoint.disabled'],
    );
    for (const [i, e] of events.entries()) {
      assert.equal(hits[i].headers['guard-event'], e.event_type);
      assert.equal(e.tenant_id, t.tenantId);
      assert.ok(e.console_url.endsWith(`/console/settings/integrations/webhooks/${bad.id}`), e.console_url);
      if (e.event_type === 'signal_created' || e.event_type === 'audit.event')
        assert.fail('the watcher subscribes to no signals and no audit entries');
      assert.deepEqual(
        [e.data.endpoint_id, e.data.name, e.data.url],
        [bad.id, 'SIEM', new URL(receiver.url(failing)).origin],
      );
      if (e.event_type === 'endpoint.failing') {
        const since = Date.parse(e.data.failing_since);
        assert.equal(e.data.disable_at, new Date(since + 4000).toISOString());
        assert.ok(Date.parse(e.data.occurred_at) - since >= (4000 * e.data.percent) / 100);
        assert.equal(e.data.last_error, 'HTTP 503');
      } else if (e.event_type === 'endpoint.disabled') assert.match(e.data.reason, /^disabled automatically/);
    }
    assert.equal(new Set(events.map((e) => (e.data as { event_id: string }).event_id)).size, 4);
    assert.ok(
      receiver.hitsFor(failing).every((h) => h.headers['guard-event'] === 'signal_created'),
      'the failing endpoint hears nothing about itself',
    );
    assert.ok(
      receiver.hitsFor(bystander).every((h) => h.headers['guard-event'] === 'signal_created'),
      'an endpoint that did not subscribe gets no operational event',
    );
    const audit = await apiCall(server, 'GET', '/v1/audit?limit=50', t.adminToken);
    const ours = audit.json.entries.filter((a: Loose) => a.target === bad.id);
    assert.deepEqual(
      ours.map((a: Loose) => a.action),
      ['webhook_endpoint.disabled', 'webhook_endpoint.failing', 'webhook_endpoint.failing', 'webhook_endpoint.failing'],
    );
  });
});

describe('replay by filter', () => {
  let server: WebhookServer;
  before(async () => {
    server = await startWebhookServer({
      caPem: tls.caPem,
      // No retries, so a long attempt timeout: a connection slow to open on a loaded machine must
      // not fail a re-sent delivery (it would be counted sent and never arrive).
      flags: {
        'webhook-retry-schedule': '0',
        'webhook-replay-rate': '500',
        'webhook-endpoint-concurrency': '16',
        'webhook-timeout-ms': '30000',
      },
    });
  });
  after(() => server?.close());

  const replay = (token: string, endpointId: string, body: Record<string, unknown>) =>
    apiCall(server, 'POST', `/v1/webhooks/endpoints/${endpointId}/replay`, token, body);

  async function waitForReplay(token: string, id: string, state: string, timeoutMs = 20_000): Promise<Loose> {
    let last: Loose;
    await waitFor(
      async () => {
        last = (await apiCall(server, 'GET', `/v1/webhooks/replays/${id}`, token)).json;
        return last.state === state;
      },
      `replay ${state}`,
      timeoutMs,
    );
    // biome-ignore lint/style/noNonNullAssertion: set by the wait above
    return last!;
  }

  it('counts in a dry run exactly what the real run re-sends, with the original Guard-Delivery; audited; members only read', async () => {
    const t = await newTenant(server);
    const p = path('outage');
    let down = true;
    receiver.on(p, () => ({ status: down ? 500 : 200 }));
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(p) });
    const before = new Date(Date.now() - 1000).toISOString();
    for (let i = 0; i < 12; i++) await createSignal(server, t.agentKey);
    await receiver.waitForHits(p, 12);
    await waitFor(
      async () => (await listDeliveries(server, t.adminToken, e.id)).filter((d) => d.status === 'failed').length === 12,
      'twelve failed deliveries',
    );
    down = false;
    await createSignal(server, t.agentKey); // a success, not in the replay of failures
    await receiver.waitForHits(p, 13);
    const failedIds = (await listDeliveries(server, t.adminToken, e.id))
      .filter((d) => d.status === 'failed')
      .map((d) => d.id)
      .sort();

    const dry = await replay(t.adminToken, e.id, { status: 'failed', since: before, dry_run: true });
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.json.count, 12);
    const all = await replay(t.adminToken, e.id, { since: before, dry_run: true });
    assert.equal(all.json.count, 13, 'without a status: failed and succeeded');
    const member = await addUserToken(server, t.tenantId, 'member');
    assert.equal((await replay(member, e.id, { since: before })).status, 403);

    const started = await replay(t.adminToken, e.id, { status: 'failed', since: before });
    assert.equal(started.status, 202, started.text);
    assert.equal(started.json.total, 12);
    const done = await waitForReplay(t.adminToken, started.json.id, 'done');
    assert.deepEqual([done.total, done.sent, done.remaining, done.skipped], [12, 12, 0, 0]);
    // Done means every delivery was queued again; they reach the receiver as the worker sends them.
    await waitForDeliveriesMade(server, [e.id]);
    const resent = receiver.hitsFor(p).slice(13);
    assert.equal(resent.length, 12, 'as many re-sent as the dry run counted');
    assert.deepEqual(resent.map((h) => h.headers['guard-delivery']).sort(), failedIds);
    const list = await listDeliveries(server, t.adminToken, e.id);
    assert.equal(list.filter((d) => d.status === 'succeeded').length, 13);
    assert.equal((await replay(t.adminToken, e.id, { status: 'failed', since: before, dry_run: true })).json.count, 0);
    const audit = await apiCall(server, 'GET', '/v1/audit?action=webhook_endpoint.replay', t.adminToken);
    assert.deepEqual(
      audit.json.entries.map((a: Loose) => a.target),
      [started.json.id],
    );
    const shown = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}/replays`, member);
    assert.deepEqual(
      shown.json.replays.map((r: Loose) => r.id),
      [started.json.id],
    );
  });

  it('refuses a second running replay of an endpoint and a bad range; a cancelled replay stops re-queuing', async () => {
    const t = await newTenant(server);
    const p = path('slow');
    // Slow answers keep the replay running long enough to cancel it.
    receiver.on(p, async () => {
      await sleep(50);
      return { status: 200 };
    });
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(p) });
    const since = new Date(Date.now() - 1000).toISOString();
    await seedDeliveries(server, t.tenantId, e.id, 400);
    assert.equal((await replay(t.adminToken, e.id, { since, until: since })).status, 400);
    // An until in the future is now: deliveries completed later never join the walk.
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const capped = await replay(t.adminToken, e.id, { since, until: future, dry_run: true });
    assert.equal(capped.status, 200, capped.text);
    assert.ok(Date.parse(capped.json.until) <= Date.now(), `until ${capped.json.until} is not past now`);
    const started = await replay(t.adminToken, e.id, { since });
    assert.equal(started.status, 202, started.text);
    const twice = await replay(t.adminToken, e.id, { since });
    assert.equal(twice.status, 409);
    assert.equal(twice.json.error.code, 'replay_running');
    await receiver.waitForHits(p, 20);
    const cancelled = await apiCall(server, 'POST', `/v1/webhooks/replays/${started.json.id}/cancel`, t.adminToken);
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.json.state, 'cancelled');
    const audited = await apiCall(server, 'GET', '/v1/audit?action=webhook_endpoint.replay_cancel', t.adminToken);
    assert.deepEqual(
      audited.json.entries.map((a: Loose) => a.target),
      [started.json.id],
      'the cancel is audited with the replay it stopped',
    );
    // What was queued or in flight at the cancel (at most the replay's window) lands; then the
    // feeder passes again, and would have fed the replay had the cancel not stopped it.
    await waitForDeliveriesMade(server, [e.id]);
    const after = receiver.hitsFor(p).length;
    await replayFeederPassed(server, t, receiver.url(path('marker')));
    await waitForDeliveriesMade(server, [e.id]);
    assert.equal(receiver.hitsFor(p).length, after, 'nothing more is sent');
    assert.ok(after < 400, `${after} of 400 sent before the cancel took effect`);
    const shown = (await apiCall(server, 'GET', `/v1/webhooks/replays/${started.json.id}`, t.adminToken)).json;
    const states = await server.deps.db
      .selectFrom('webhook_deliveries')
      .select(['state', 'attempts', 'last_error'])
      .where('replay_id', '=', started.json.id)
      .execute();
    assert.deepEqual(
      [shown.sent, shown.remaining],
      [after, 400 - after],
      `the replay's deliveries: ${JSON.stringify(states.filter((d) => d.state !== 'succeeded'))}`,
    );
    const again = await apiCall(server, 'POST', `/v1/webhooks/replays/${started.json.id}/cancel`, t.adminToken);
    assert.equal(again.status, 409);
  });

  it('delivers live signals while 5,000 are replayed to the same endpoint, not behind them (its p99 goal: bench:replay)', async (ctx) => {
    const t = await newTenant(server);
    const p = path('live');
    const e = await createEndpoint(server, t.adminToken, { url: receiver.url(p) });
    const since = new Date(Date.now() - 1000).toISOString();
    await seedDeliveries(server, t.tenantId, e.id, 5000);
    const until = new Date().toISOString(); // the live signals below are not replayed
    const live = async (n: number) => {
      const latencies: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = Date.now();
        const { signal_id } = await createSignal(server, t.agentKey);
        await waitFor(
          () => receiver.hitsFor(p).some((h) => bodyJson(h).data.signal_id === signal_id),
          'the live signal',
          30_000,
        );
        latencies.push(Date.now() - t0);
        await sleep(20);
      }
      return latencies;
    };
    const alone = await live(40);
    const started = await replay(t.adminToken, e.id, { since, until });
    assert.equal(started.json.total, 5000);
    await waitFor(async () => receiver.hitsFor(p).length > 100, 'the replay under way');
    const during = await live(80);
    const progress = (await apiCall(server, 'GET', `/v1/webhooks/replays/${started.json.id}`, t.adminToken)).json;
    assert.ok(progress.sent > 100, `the replay ran meanwhile: ${JSON.stringify(progress)}`);
    // Every live signal arrived while the replay still had work left: live traffic went beside
    // it, not after it (a live signal queued behind it would have arrived after its end, so the
    // wait for each may be generous). How fast is a speed goal, measured by bench/replay.ts (live p99 ≤ 100 ms
    // beside a replay of 20,000), not asserted here; the figures are printed for the reader.
    assert.equal(progress.state, 'running', `the replay was still running: ${JSON.stringify(progress)}`);
    assert.ok(progress.remaining > 0, `the replay had work left: ${JSON.stringify(progress)}`);
    ctx.diagnostic(
      `live p99 alone ${percentile(alone, 99)} ms, during the replay ${percentile(during, 99)} ms ` +
        `(replay sent ${progress.sent} meanwhile, ${progress.remaining} left)`,
    );
    await apiCall(server, 'POST', `/v1/webhooks/replays/${started.json.id}/cancel`, t.adminToken);
  });
});
