// Scheduled collection (issue 24, item 5), on both engines (scripts/test-postgres.ts runs this
// file on PostgreSQL), against the real server on loopback with a clock the test moves: the
// tenant's collection_schedule setting (admins change it, audited; members and support staff
// read it), the weekly slot firing once — also with two scheduler instances on one database,
// and after a restart that missed slots (once, not once per missed week) — the critical-signal
// trigger with its interval and with an open request, tenants without the setting or with
// another one untouched, and a real `guard-agent daemon` answering a scheduled request.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { enrolledHome, type RunningDaemon, startDaemon, stopAllDaemons } from '../../agent/test/daemon-harness.ts';
import { TempDirs } from '../../agent/test/harness.ts';
import { runWeeklySchedules } from '../src/collection-schedule/index.ts';
import { type Db, openDatabase } from '../src/db/index.ts';
import { maintain } from '../src/server.ts';
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
import { databaseFlags, ON_POSTGRES } from './test-database.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const silent = { info() {}, error() {} };
/** Saturday 2026-11-21, 09:30 UTC. */
const START = Date.parse('2026-11-21T09:30:00.000Z');

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

type Tenant = Awaited<ReturnType<typeof setupTenant>>;

describe('the collection schedule and its scheduler', () => {
  const clock = new Clock(START);
  let server: TestServer;
  let a: Tenant; // weekly on Saturdays at 10:00, and on critical signals
  let b: Tenant; // weekly on Sundays at 10:00
  let c: Tenant; // no setting
  let member: string;
  let a1: EnrolledAgent;
  let a2: EnrolledAgent;
  let aOffline: EnrolledAgent;
  let aRevoked: EnrolledAgent;
  let b1: EnrolledAgent;
  let c1: EnrolledAgent;

  const put = (body: unknown, token = a.admin_token) =>
    api(server.url, 'PUT', '/v1/tenant/collection-schedule', { token, body });
  const get = (token = a.admin_token, query = '') =>
    api(server.url, 'GET', `/v1/tenant/collection-schedule${query}`, { token });
  const heartbeat = async (agent: EnrolledAgent) => {
    const res = await api(server.url, 'POST', '/v1/agent/heartbeat', {
      token: agent.api_key,
      body: { agent_version: '0.1.0', hostname: 'host.example', uptime_seconds: 100 },
    });
    assert.equal(res.status, 200, res.text);
  };
  /** Every online server heartbeats now (online: seen within the last 5 minutes). */
  const online = () => Promise.all([a1, a2, b1, c1].map(heartbeat));
  const requests = async (tenant: Tenant) => {
    const res = await api(server.url, 'GET', '/v1/bundle-requests?limit=200', { token: tenant.admin_token });
    assert.equal(res.status, 200, res.text);
    return res.json.requests as Loose[];
  };
  /** Ends the open requests of these servers, as their agents would. */
  const finish = async (...agents: EnrolledAgent[]) => {
    for (const agent of agents) {
      const polled = await api(server.url, 'GET', '/v1/agent/commands?wait=0', { token: agent.api_key });
      for (const cmd of polled.json.commands as Loose[]) {
        const r = await api(server.url, 'POST', `/v1/agent/commands/${cmd.id}/report`, {
          token: agent.api_key,
          body: { state: 'interrupted', reason: 'test' },
        });
        assert.equal(r.status, 200, r.text);
      }
    }
  };
  const signal = (agent: EnrolledAgent, severity: number) =>
    api(server.url, 'POST', '/v1/signals', {
      token: agent.api_key,
      body: {
        signal_type: 'disk_failing',
        severity,
        description: 'sda: SMART failure',
        identity_id: 'root',
        identity_name: 'root',
      },
    });

  before(async () => {
    server = await startTestServer({ clock });
    a = await setupTenant(server);
    b = await setupTenant(server);
    c = await setupTenant(server);
    member = await addUser(server, a.tenant_id, 'member');
    a1 = await enrollAgent(server.url, a.enroll_token, { hostname: 'a1.example' });
    a2 = await enrollAgent(server.url, a.enroll_token, { hostname: 'a2.example' });
    aOffline = await enrollAgent(server.url, a.enroll_token, { hostname: 'a-offline.example' });
    aRevoked = await enrollAgent(server.url, a.enroll_token, { hostname: 'a-revoked.example' });
    b1 = await enrollAgent(server.url, b.enroll_token, { hostname: 'b1.example' });
    c1 = await enrollAgent(server.url, c.enroll_token, { hostname: 'c1.example' });
    await heartbeat(aRevoked);
    const revoked = await api(server.url, 'POST', `/v1/agents/${aRevoked.agent_id}/revoke`, { token: a.admin_token });
    assert.equal(revoked.status, 200, revoked.text);
  });
  after(() => server.cleanup());

  it('a tenant without the setting reads an empty schedule; bad input is 400, members and support staff cannot change it', async () => {
    const empty = await get(c.admin_token);
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.json, { collection_schedule: {}, next_weekly_run_at: null });
    assertError(await put({ weekly: { enabled: true, weekday: 'funday', hour: 10 } }), 400, 'invalid_request');
    assertError(await put({ weekly: { enabled: true, weekday: 'monday', hour: 24 } }), 400, 'invalid_request');
    assertError(await put({ on_critical_signal: { enabled: true, min_interval_hours: 0 } }), 400, 'invalid_request');
    assertError(await put({ monthly: {} }), 400, 'invalid_request');
    assertError(await put({}, member), 403, 'forbidden');
    assertError(await put({}, server.supportToken), 403, 'forbidden');
  });

  it('an admin sets it (audited); the weekly run is next at the slot to come; members and support staff read it', async () => {
    const res = await put({
      weekly: { enabled: true, weekday: 'saturday', hour: 10 },
      on_critical_signal: { enabled: true },
    });
    assert.equal(res.status, 200, res.text);
    const expected = {
      collection_schedule: {
        weekly: { enabled: true, weekday: 'saturday', hour: 10 },
        on_critical_signal: { enabled: true, min_interval_hours: 24 },
      },
      next_weekly_run_at: '2026-11-21T10:00:00.000Z',
    };
    assert.deepEqual(res.json, expected);
    assert.deepEqual((await get(member)).json, expected);
    assertError(await get(server.supportToken), 400, 'invalid_request');
    assert.deepEqual((await get(server.supportToken, `?tenant_id=${a.tenant_id}`)).json, expected);
    assertError(await get(server.supportToken, '?tenant_id=nope'), 404, 'not_found');
    const audit = await api(server.url, 'GET', `/v1/audit?tenant_id=${a.tenant_id}&action=collection_schedule.update`, {
      token: server.supportToken,
    });
    assert.deepEqual(
      (audit.json.entries as Loose[]).map((e) => [e.actor_role, e.target]),
      [['admin', 'weekly=saturday@10 on; on_critical_signal=24h on']],
    );
    // The same again is no change, and not audited again.
    assert.equal((await put(expected.collection_schedule)).status, 200);
    const again = await api(server.url, 'GET', `/v1/audit?tenant_id=${a.tenant_id}&action=collection_schedule.update`, {
      token: server.supportToken,
    });
    assert.equal(again.json.entries.length, 1);
    const other = await api(server.url, 'PUT', '/v1/tenant/collection-schedule', {
      token: b.admin_token,
      body: { weekly: { enabled: true, weekday: 'sunday', hour: 10 } },
    });
    assert.equal(other.json.next_weekly_run_at, '2026-11-22T10:00:00.000Z');
  });

  it('the weekly slot fires once: one request per online, non-revoked server, by two scheduler instances on one database', async () => {
    await online();
    await maintain(server.deps, server.deps.config, silent); // 09:30: before the slot
    assert.deepEqual(await requests(a), []);

    clock.advance(35 * 60_000); // 10:05
    await online();
    // A second replica: another connection pool to the same database (PostgreSQL); SQLite has one owner.
    let second: Db = server.deps.db;
    if (ON_POSTGRES) {
      const url = String((await databaseFlags(server.dataDir)).database);
      second = await openDatabase({
        dataDir: server.dataDir,
        database: { engine: 'postgres', url, password: undefined, display: url, poolSize: 2 },
      });
    }
    try {
      const results = await Promise.all([
        runWeeklySchedules(server.deps),
        runWeeklySchedules({ ...server.deps, db: second }),
      ]);
      assert.equal(results[0].tenants + results[1].tenants, 1, 'one instance fired the slot');
    } finally {
      if (second !== server.deps.db) await second.destroy();
    }
    const made = await requests(a);
    assert.deepEqual(
      made.map((r) => r.server_id).sort(),
      [a1.agent_id, a2.agent_id].sort(),
      'not the offline or revoked one',
    );
    assert.ok(!made.some((r) => [aOffline.agent_id, aRevoked.agent_id].includes(r.server_id)));
    for (const r of made) {
      assert.equal(r.trigger, 'schedule_weekly');
      assert.equal(r.state, 'queued');
      assert.equal(r.signal_id, undefined);
      assert.equal(r.created_at, clock.now().toISOString());
    }
    const audit = await api(server.url, 'GET', `/v1/audit?tenant_id=${a.tenant_id}&action=bundle_request.create`, {
      token: server.supportToken,
    });
    assert.deepEqual(
      (audit.json.entries as Loose[]).map((e) => `${e.actor_id} ${e.actor_role} ${e.target}`).sort(),
      made.map((r) => `schedule schedule ${r.id}`).sort(),
    );
    assert.deepEqual(await requests(b), [], 'another tenant (its slot is tomorrow) is untouched');
    assert.deepEqual(await requests(c), [], 'a tenant without the setting is untouched');
    assert.equal((await get()).json.next_weekly_run_at, '2026-11-28T10:00:00.000Z', 'the next run is a week on');

    // Later in the same hour, with the requests finished: nothing more.
    await finish(a1, a2);
    clock.advance(30 * 60_000);
    await online();
    await maintain(server.deps, server.deps.config, silent);
    assert.equal((await requests(a)).length, 2);
  });

  it('after a restart that missed slots, the latest is caught up once', async () => {
    await server.stop();
    clock.advance(15 * DAY); // two slots of tenant a (28 Nov, 5 Dec) and of b pass while it is down
    server = await startTestServer({ dataDir: server.dataDir, clock });
    const at = clock.now().toISOString();
    await online();
    await maintain(server.deps, server.deps.config, silent);
    await finish(a1, a2, b1); // so that a second firing would find them free
    await maintain(server.deps, server.deps.config, silent);
    const weekly = (await requests(a)).filter((r) => r.trigger === 'schedule_weekly' && r.created_at === at);
    assert.deepEqual(weekly.map((r) => r.server_id).sort(), [a1.agent_id, a2.agent_id].sort());
    const ofB = await requests(b);
    assert.deepEqual(
      ofB.map((r) => [r.server_id, r.trigger]),
      [[b1.agent_id, 'schedule_weekly']],
      'b: its two missed Sundays make one',
    );
    assert.deepEqual(await requests(c), []);
  });

  it('a critical signal asks its server for a bundle: not below critical, not with one open, not twice within the interval', async () => {
    assert.equal((await signal(a1, 4)).status, 201);
    const before = (await requests(a)).length;
    assert.equal((await requests(a)).length, before, 'severity 4 is not critical');

    const first = await signal(a1, 5);
    assert.equal(first.status, 201, first.text);
    let made = (await requests(a)).filter((r) => r.trigger === 'critical_signal');
    assert.equal(made.length, 1);
    assert.equal(made[0].server_id, a1.agent_id);
    assert.equal(made[0].signal_id, first.json.signal_id);
    assert.equal(made[0].state, 'queued');

    assert.equal((await signal(a1, 5)).status, 201, 'the signal is stored all the same');
    assert.equal((await requests(a)).filter((r) => r.trigger === 'critical_signal').length, 1, 'one is open');

    await finish(a1);
    clock.advance(23 * HOUR);
    await signal(a1, 5);
    assert.equal((await requests(a)).filter((r) => r.trigger === 'critical_signal').length, 1, 'within 24 hours');

    // Another server of the tenant is its own: its first critical signal makes one.
    await signal(a2, 5);
    made = (await requests(a)).filter((r) => r.trigger === 'critical_signal');
    assert.deepEqual(made.map((r) => r.server_id).sort(), [a1.agent_id, a2.agent_id].sort());

    clock.advance(2 * HOUR);
    const later = await signal(a1, 5);
    made = (await requests(a)).filter((r) => r.trigger === 'critical_signal' && r.server_id === a1.agent_id);
    assert.equal(made.length, 2, 'past the interval');
    assert.equal(made[0].signal_id, later.json.signal_id);
    await finish(a1, a2);

    // Critical signals of three tenants at once (their schedules are read together): each
    // tenant's own schedule decides.
    clock.advance(25 * HOUR);
    const together = await Promise.all([signal(a1, 5), signal(a2, 5), signal(b1, 5), signal(c1, 5)]);
    for (const r of together) assert.equal(r.status, 201, r.text);
    made = (await requests(a)).filter((r) => r.trigger === 'critical_signal');
    assert.equal(made.length, 5);
    assert.deepEqual(
      made
        .slice(0, 2)
        .map((r) => r.signal_id)
        .sort(),
      [together[0].json.signal_id, together[1].json.signal_id].sort(),
    );
    await finish(a1, a2);

    // Tenants without the part: b has a weekly one only, c none.
    assert.equal((await signal(b1, 5)).status, 201);
    assert.equal((await signal(c1, 5)).status, 201);
    assert.equal((await requests(b)).filter((r) => r.trigger === 'critical_signal').length, 0);
    assert.deepEqual(await requests(c), []);

    // Turned off: no more.
    const off = await put({ on_critical_signal: { enabled: false, min_interval_hours: 1 } });
    assert.deepEqual(off.json, {
      collection_schedule: { on_critical_signal: { enabled: false, min_interval_hours: 1 } },
      next_weekly_run_at: null,
    });
    clock.advance(2 * HOUR);
    await signal(a1, 5);
    assert.equal((await requests(a)).filter((r) => r.trigger === 'critical_signal').length, 5);
  });
});

describe('a real guard-agent daemon answers a scheduled request', () => {
  const dirs = new TempDirs();
  let server: TestServer;
  let daemon: RunningDaemon;
  after(async () => {
    await stopAllDaemons();
    await server?.cleanup();
    await dirs.cleanup();
  });

  it('a critical signal of the server makes a request its daemon collects and uploads: an ordinary console_push bundle', async () => {
    // The clock is the real time here: the daemon's presigned uploads are checked against it.
    server = await startTestServer({ clock: new Clock(Date.now()) });
    const tenant = await setupTenant(server);
    const home = await enrolledHome(dirs, server.url, tenant.enroll_token);
    daemon = startDaemon(home);
    await daemon.waitForLog(/msg="guard-agent daemon started"/, 'the daemon to start');
    const set = await api(server.url, 'PUT', '/v1/tenant/collection-schedule', {
      token: tenant.admin_token,
      body: { on_critical_signal: { enabled: true, min_interval_hours: 6 } },
    });
    assert.equal(set.status, 200, set.text);
    const { api_key } = JSON.parse(await readFile(join(home.stateDir, 'enrollment.json'), 'utf8'));
    const raised = await api(server.url, 'POST', '/v1/signals', {
      token: api_key,
      body: {
        signal_type: 'disk_failing',
        severity: 5,
        description: 'sda failing',
        identity_id: 'root',
        identity_name: 'root',
      },
    });
    assert.equal(raised.status, 201, raised.text);
    const list = await api(server.url, 'GET', '/v1/bundle-requests', { token: tenant.admin_token });
    assert.equal(list.json.requests.length, 1, list.text);
    const id = list.json.requests[0].id;
    let done: Loose;
    await waitFor(
      async () => {
        done = (await api(server.url, 'GET', `/v1/bundle-requests/${id}`, { token: tenant.admin_token })).json;
        return ['done', 'failed', 'interrupted', 'expired'].includes(done.state);
      },
      'the scheduled request to finish',
      60_000,
    );
    assert.equal(done.state, 'done', JSON.stringify(done));
    assert.equal(done.trigger, 'critical_signal');
    assert.equal(done.signal_id, raised.json.signal_id);
    const bundle = await api(server.url, 'GET', `/v1/support/bundles/${done.bundle_id}`, { token: tenant.admin_token });
    assert.equal(bundle.status, 200, bundle.text);
    assert.equal(bundle.json.manifest.trigger, 'console_push');
    assert.equal(bundle.json.manifest.request_id, id);
    assert.equal(bundle.json.agent_id, home.agentId);
  });
});
