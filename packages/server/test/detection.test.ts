// Agent detection on the service (issue 18, items 2 and 3; DESIGN §3 contract — detection),
// against the real server on loopback, on this run's engine: the Idempotency-Key of
// POST /v1/signals (a retried POST makes no second signal, also when 20 arrive at once, and on
// PostgreSQL when they arrive at two replicas), the tenant's detection policy (API, audit,
// applied at ingest), how agents get it (heartbeat and command poll answers; a held poll is
// answered at once when an admin changes it), and the detectors the heartbeat reports, shown in
// GET /v1/servers.

import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  addUser,
  api,
  type EnrolledAgent,
  enrollAgent,
  isErrorShape,
  type Loose,
  makeTempDir,
  setupTenant,
  startTestServer,
  type TestServer,
  waitFor,
} from './harness.ts';
import { databaseFlags, ON_POSTGRES } from './test-database.ts';

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

const SIGNAL = {
  signal_type: 'sudo_command_executed',
  severity: 3,
  description: 'alice ran sudo /usr/bin/apt-get install netcat',
  identity_id: 'uid-1000',
  identity_name: 'alice',
};

let server: TestServer;
let base: string;
let setup: Awaited<ReturnType<typeof setupTenant>>;
let other: Awaited<ReturnType<typeof setupTenant>>;
let member: string;
let agent: EnrolledAgent;
let agent2: EnrolledAgent;
let otherAgent: EnrolledAgent;

before(async () => {
  // Endpoints on a closed loopback port: deliveries are made (and fail), which is all we count.
  server = await startTestServer({ flags: { 'webhook-allow-private': 'true' } });
  base = server.url;
  setup = await setupTenant(server);
  other = await setupTenant(server);
  member = await addUser(server, setup.tenant_id, 'member');
  agent = await enrollAgent(base, setup.enroll_token, { hostname: 'web-1.example' });
  agent2 = await enrollAgent(base, setup.enroll_token, { hostname: 'web-2.example' });
  otherAgent = await enrollAgent(base, other.enroll_token, { hostname: 'elsewhere.example' });
  for (const name of ['siem', 'pager']) {
    const res = await api(base, 'POST', '/v1/webhooks/endpoints', {
      token: setup.admin_token,
      body: { name, url: `https://127.0.0.1:9/${name}` },
    });
    assert.equal(res.status, 201, res.text);
  }
});
after(() => server.cleanup());

const post = (a: EnrolledAgent, body: Record<string, unknown> = {}, key?: string, at = base) =>
  api(at, 'POST', '/v1/signals', {
    token: a.api_key,
    body: { ...SIGNAL, ...body },
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });

/** The tenant's signals with this description (newest first). */
async function signalsDescribed(description: string, token = setup.admin_token): Promise<Loose[]> {
  const res = await api(base, 'GET', '/v1/signals?limit=200', { token });
  assert.equal(res.status, 200, res.text);
  return (res.json.signals as Loose[]).filter((s) => s.description === description);
}

const policy = (token = setup.admin_token) => api(base, 'GET', '/v1/detection/policy', { token });
const putPolicy = (signal_types: unknown, token = setup.admin_token) =>
  api(base, 'PUT', '/v1/detection/policy', { token, body: { signal_types } });

describe('Idempotency-Key on POST /v1/signals', () => {
  it('the same key twice: one signal, one delivery per endpoint; the retry answers 200 with the same signal_id', async () => {
    const body = { description: 'idempotent: twice' };
    const first = await post(agent, body, 'sig-0001');
    assert.equal(first.status, 201, first.text);
    assert.deepEqual(first.json, { signal_id: first.json.signal_id, deliveries: 2 });
    const again = await post(agent, body, 'sig-0001');
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.json, first.json);
    assert.equal((await signalsDescribed(body.description)).length, 1);
    const deliveries = await api(base, 'GET', `/v1/signals/${first.json.signal_id}/deliveries`, {
      token: setup.admin_token,
    });
    assert.deepEqual(
      (deliveries.json.deliveries as Loose[]).map((d) => d.endpoint_name),
      ['pager', 'siem'],
      'one delivery per endpoint',
    );
  });

  it('the retry is answered with the first signal even when its body differs: nothing of it is stored', async () => {
    const first = await post(agent, { description: 'idempotent: first body' }, 'sig-0002');
    const changed = await post(agent, { description: 'idempotent: other body', severity: 5 }, 'sig-0002');
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.json.signal_id, first.json.signal_id);
    assert.deepEqual(await signalsDescribed('idempotent: other body'), []);
  });

  it('20 POSTs with one key at once make one signal: one 201, nineteen 200 with its id', async () => {
    const body = { description: 'idempotent: twenty at once' };
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(agent, body, 'sig-burst-1')));
    assert.equal(answers.filter((a) => a.status === 201).length, 1, answers.map((a) => a.text).join());
    assert.equal(answers.filter((a) => a.status === 200).length, 19);
    const ids = new Set(answers.map((a) => a.json.signal_id));
    assert.equal(ids.size, 1);
    assert.deepEqual(new Set(answers.map((a) => a.json.deliveries)), new Set([2]));
    assert.equal((await signalsDescribed(body.description)).length, 1);
  });

  it('keys are per agent: two agents (and another tenant’s) may use the same key', async () => {
    const body = { description: 'idempotent: per agent' };
    const a = await post(agent, body, 'shared-key');
    const b = await post(agent2, body, 'shared-key');
    const c = await post(otherAgent, body, 'shared-key');
    for (const r of [a, b, c]) assert.equal(r.status, 201, r.text);
    assert.equal(new Set([a.json.signal_id, b.json.signal_id, c.json.signal_id]).size, 3);
    assert.equal((await signalsDescribed(body.description)).length, 2);
    assert.equal((await signalsDescribed(body.description, other.admin_token)).length, 1);
  });

  it('without a key every POST is a new signal, as before', async () => {
    const body = { description: 'idempotent: no key' };
    assert.equal((await post(agent, body)).status, 201);
    assert.equal((await post(agent, body)).status, 201);
    assert.equal((await signalsDescribed(body.description)).length, 2);
  });

  it('a key that is not 1–200 characters of A-Z a-z 0-9 . _ : - is refused (400) and nothing is stored', async () => {
    const body = { description: 'idempotent: bad key' };
    for (const bad of ['', 'x'.repeat(201), 'a b', 'a/b', 'a,b', 'caf%C3%A9']) {
      const res = await post(agent, body, bad);
      assertError(res, 400, 'invalid_idempotency_key');
      assert.match(res.json.error.message, /Idempotency-Key must be 1 to 200 characters/);
    }
    assert.equal((await post(agent, body, 'x'.repeat(200))).status, 201, '200 characters are fine');
    assert.equal((await post(agent, body, 'A_b.c-d:9')).status, 201);
    assert.equal((await signalsDescribed(body.description)).length, 2);
  });

  it('on PostgreSQL, 20 POSTs with one key at two replicas at once still make one signal', {
    skip: !ON_POSTGRES,
  }, async () => {
    // A second replica on the same database, with the first one's master key.
    const dataDir = await makeTempDir('replica');
    await copyFile(join(server.dataDir, 'master.key'), join(dataDir, 'master.key'));
    const shared = (await databaseFlags(server.dataDir)) as Record<string, string>;
    const replica = await startTestServer({ dataDir, clock: server.clock, flags: { ...shared, migrate: 'true' } });
    try {
      const body = { description: 'idempotent: two replicas' };
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => post(agent, body, 'sig-replicas-1', i % 2 === 0 ? base : replica.url)),
      );
      assert.deepEqual(answers.filter((a) => a.status === 201).length, 1, answers.map((a) => a.text).join());
      assert.deepEqual(answers.filter((a) => a.status === 200).length, 19);
      assert.equal(new Set(answers.map((a) => a.json.signal_id)).size, 1);
      assert.equal((await signalsDescribed(body.description)).length, 1);
    } finally {
      await replica.stop();
    }
  });
});

describe('the tenant’s detection policy', () => {
  it('GET: the seven types in DESIGN §3’s order, all on, default severities; admins and members read it', async () => {
    for (const token of [setup.admin_token, member]) {
      const res = await policy(token);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.json.signal_types.map((t: Loose) => [t.signal_type, t.enabled, t.severity, t.default_severity]),
        [
          ['sudo_command_executed', true, null, 3],
          ['ssh_login_failed', true, null, 2],
          ['ssh_bruteforce', true, null, 4],
          ['ssh_login_succeeded', true, null, 1],
          ['user_created', true, null, 3],
          ['critical_file_modified', true, null, 4],
          ['exec_from_writable_dir', true, null, 4],
        ],
      );
      for (const t of res.json.signal_types) assert.ok(t.description.length > 10, t.signal_type);
      assert.equal(res.json.updated_at, null);
      assert.equal(typeof res.json.version, 'string');
    }
  });

  it('members may not change it (403); unknown types and severities outside 1–5 are refused (400)', async () => {
    assertError(await putPolicy({ ssh_login_succeeded: { enabled: false } }, member), 403, 'forbidden');
    const unknown = await putPolicy({ ssh_login_succeeded: { enabled: false }, kernel_panic: { enabled: false } });
    assertError(unknown, 400, 'unknown_signal_type');
    assert.match(unknown.json.error.message, /"kernel_panic"/);
    assert.match(unknown.json.error.message, /sudo_command_executed/);
    assertError(await putPolicy({ sudo_command_executed: { severity: 6 } }), 400, 'invalid_request');
    assertError(await putPolicy({ sudo_command_executed: { severity: 0 } }), 400, 'invalid_request');
    assertError(await putPolicy({ sudo_command_executed: { muted: true } }), 400, 'invalid_request');
    assertError(await putPolicy('all'), 400, 'invalid_request');
    const unchanged = await policy();
    assert.equal(unchanged.json.updated_at, null, 'nothing was changed');
  });

  it('an admin turns a type off and overrides a severity: only what is given changes, audited with what changed', async () => {
    const before = (await policy()).json;
    const res = await putPolicy({ ssh_login_succeeded: { enabled: false }, sudo_command_executed: { severity: 5 } });
    assert.equal(res.status, 200, res.text);
    const byType = new Map((res.json.signal_types as Loose[]).map((t) => [t.signal_type, t]));
    assert.deepEqual(
      [byType.get('ssh_login_succeeded').enabled, byType.get('ssh_login_succeeded').severity],
      [false, null],
    );
    assert.deepEqual(
      [byType.get('sudo_command_executed').enabled, byType.get('sudo_command_executed').severity],
      [true, 5],
    );
    assert.equal(byType.get('user_created').enabled, true, 'the others are untouched');
    assert.notEqual(res.json.version, before.version);
    assert.equal(res.json.updated_at, server.clock.now().toISOString());
    assert.deepEqual((await policy(member)).json, res.json, 'a member reads the same');
    const audit = await api(base, 'GET', '/v1/audit?action=detection.update', { token: setup.admin_token });
    assert.deepEqual(
      (audit.json.entries as Loose[]).map((e) => [e.action, e.target]),
      [['detection.update', 'sudo_command_executed.severity=5, ssh_login_succeeded.enabled=false']],
    );
    // The same change again changes nothing: same version, no audit entry.
    const again = await putPolicy({ ssh_login_succeeded: { enabled: false } });
    assert.equal(again.json.version, res.json.version);
    const audit2 = await api(base, 'GET', '/v1/audit?action=detection.update', { token: setup.admin_token });
    assert.equal(audit2.json.entries.length, 1);
    // Another tenant's policy is its own.
    const theirs = await policy(other.admin_token);
    assert.ok(theirs.json.signal_types.every((t: Loose) => t.enabled && t.severity === null));
  });

  it('at ingest: a type turned off is answered 202 and not stored; an overridden severity replaces the agent’s', async () => {
    const off = await post(agent, { signal_type: 'ssh_login_succeeded', severity: 1, description: 'policy: off' });
    assert.equal(off.status, 202, off.text);
    assert.deepEqual(off.json, {
      signal_id: null,
      deliveries: 0,
      suppressed: "disabled by the tenant's detection policy",
    });
    assert.deepEqual(await signalsDescribed('policy: off'), []);
    const raised = await post(agent, { severity: 3, description: 'policy: severity' });
    assert.equal(raised.status, 201, raised.text);
    const [stored] = await signalsDescribed('policy: severity');
    assert.equal(stored.severity, 5);
    // Other signal types pass unchanged; so does another tenant's agent.
    const custom = await post(agent, { signal_type: 'custom.check', severity: 2, description: 'policy: custom' });
    assert.equal(custom.status, 201);
    assert.equal((await signalsDescribed('policy: custom'))[0].severity, 2);
    const theirs = await post(otherAgent, {
      signal_type: 'ssh_login_succeeded',
      severity: 1,
      description: 'policy: t2',
    });
    assert.equal(theirs.status, 201);
    // Back to the default severity: the agent's value stands again.
    await putPolicy({ sudo_command_executed: { severity: null } });
    await post(agent, { severity: 4, description: 'policy: default again' });
    assert.equal((await signalsDescribed('policy: default again'))[0].severity, 4);
  });

  it('a retry of a signal stored before its type was turned off still answers that signal', async () => {
    const body = { signal_type: 'ssh_login_failed', severity: 2, description: 'policy: retried' };
    const first = await post(agent, body, 'sig-before-off');
    assert.equal(first.status, 201, first.text);
    await putPolicy({ ssh_login_failed: { enabled: false } });
    const retry = await post(agent, body, 'sig-before-off');
    assert.equal(retry.status, 200, retry.text);
    assert.deepEqual(retry.json, first.json);
    assert.equal((await post(agent, body, 'sig-after-off')).status, 202);
    await putPolicy({ ssh_login_failed: { enabled: true } });
  });
});

describe('the agent gets the policy through its command channel', () => {
  const heartbeat = (a: EnrolledAgent, extra: Record<string, unknown> = {}) =>
    api(base, 'POST', '/v1/agent/heartbeat', {
      token: a.api_key,
      body: { agent_version: '0.4.0', hostname: 'web-1.example', uptime_seconds: 3600, ...extra },
    });
  const poll = (a: EnrolledAgent, query: string) =>
    api(base, 'GET', `/v1/agent/commands?${query}`, { token: a.api_key });

  it('heartbeat and poll answers carry all seven types, severity resolved, and the version', async () => {
    const current = (await policy()).json;
    const beat = await heartbeat(agent);
    assert.equal(beat.status, 200, beat.text);
    const d = beat.json.detection;
    assert.equal(d.version, current.version);
    assert.deepEqual(Object.keys(d.signal_types).sort(), current.signal_types.map((t: Loose) => t.signal_type).sort());
    assert.deepEqual(d.signal_types.ssh_login_succeeded, { enabled: false, severity: 1, overridden: false });
    assert.deepEqual(d.signal_types.ssh_bruteforce, { enabled: true, severity: 4, overridden: false });
    await putPolicy({ user_created: { severity: 2 } });
    const polled = await poll(agent, 'wait=0');
    assert.equal(polled.status, 200, polled.text);
    assert.deepEqual(polled.json.commands, []);
    assert.deepEqual(polled.json.detection.signal_types.user_created, { enabled: true, severity: 2, overridden: true });
    assert.notEqual(polled.json.detection.version, d.version);
  });

  it('a poll naming an older version answers at once; one naming the current one is held', async () => {
    const { version } = (await policy()).json;
    let started = Date.now();
    const stale = await poll(agent, 'wait=10&detection_version=stale');
    assert.ok(Date.now() - started < 5000, 'answered at once, not after its 10 s wait');
    assert.equal(stale.json.detection.version, version);
    started = Date.now();
    const held = await poll(agent, `wait=1&detection_version=${version}`);
    assert.ok(Date.now() - started >= 900, 'held for its wait');
    assert.equal(held.json.detection.version, version);
  });

  it('when an admin changes the policy, held polls of the tenant’s agents answer at once with it; others stay held', async () => {
    const { version } = (await policy()).json;
    const started = Date.now();
    // Another tenant's poll, held as long as the others and ended by the test once they answered.
    const endOther = new AbortController();
    let otherDone = false;
    const otherPoll = fetch(`${base}/v1/agent/commands?wait=20`, {
      headers: { authorization: `Bearer ${otherAgent.api_key}` },
      signal: endOther.signal,
    }).then(
      () => {
        otherDone = true;
      },
      () => {},
    );
    const polls = [poll(agent, `wait=20&detection_version=${version}`), poll(agent2, 'wait=20')];
    await waitFor(() => server.deps.commands.held === 3, 'the three polls to be held');
    const changed = await putPolicy({ exec_from_writable_dir: { enabled: false } });
    assert.equal(changed.status, 200, changed.text);
    for (const res of await Promise.all(polls)) {
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.detection.version, changed.json.version);
      assert.equal(res.json.detection.signal_types.exec_from_writable_dir.enabled, false);
    }
    assert.ok(Date.now() - started < 10_000, `answered well before their 20 s wait (${Date.now() - started} ms)`);
    assert.equal(otherDone, false, "another tenant's poll is not woken");
    endOther.abort();
    await otherPoll;
    await putPolicy({ exec_from_writable_dir: { enabled: true }, user_created: { severity: null } });
  });

  it('the heartbeat reports detectors and the spool; GET /v1/servers shows them with the newest signal', async () => {
    const detectors = [
      { name: 'auth_log', state: 'running', last_event_at: '2026-11-21T09:59:00.000Z' },
      { name: 'file_integrity', state: 'running' },
      { name: 'exec', state: 'failed', reason: 'eBPF unavailable: /sys/kernel/btf/vmlinux is missing' },
    ];
    const beat = await heartbeat(agent, { detectors, spool_depth: 3 });
    assert.equal(beat.status, 200, beat.text);
    const sent = await post(agent, { description: 'servers: newest' });
    assert.equal(sent.status, 201);
    const list = await api(base, 'GET', '/v1/servers', { token: member });
    const row = (list.json.servers as Loose[]).find((s) => s.id === agent.agent_id);
    assert.deepEqual(row.detectors, detectors);
    assert.equal(row.spool_depth, 3);
    assert.equal(row.last_signal_at, server.clock.now().toISOString());
    const row2 = (list.json.servers as Loose[]).find((s) => s.id === agent2.agent_id);
    assert.deepEqual([row2.detectors, row2.spool_depth], [null, null], 'not reported');
    // A heartbeat without them (an older daemon) reports none.
    await heartbeat(agent);
    const again = (await api(base, 'GET', '/v1/servers', { token: member })).json.servers as Loose[];
    assert.equal(again.find((s) => s.id === agent.agent_id).detectors, null);
  });

  it('detector reports are checked: names, states, reason length, at most 10, spool depth ≥ 0', async () => {
    const bad = [
      { detectors: [{ name: 'ebpf', state: 'running' }] },
      { detectors: [{ name: 'exec', state: 'crashed' }] },
      { detectors: [{ name: 'exec', state: 'failed', reason: 'x'.repeat(501) }] },
      { detectors: [{ name: 'exec', state: 'running', last_event_at: 'yesterday' }] },
      { detectors: Array(11).fill({ name: 'exec', state: 'running' }) },
      { detectors: [{ name: 'exec', state: 'running', pid: 7 }] },
      { spool_depth: -1 },
      { spool_depth: 1.5 },
    ];
    for (const extra of bad) assertError(await heartbeat(agent, extra), 400, 'invalid_request');
  });
});

describe('a batch on POST /v1/signals (a JSON array, each signal with its idempotency_key)', () => {
  const batch = (a: EnrolledAgent, items: unknown, headers: Record<string, string> = {}) =>
    api(base, 'POST', '/v1/signals', { token: a.api_key, body: items, headers });
  const item = (key: string, body: Record<string, unknown> = {}) => ({ ...SIGNAL, ...body, idempotency_key: key });

  it('writes every signal with its deliveries, one result per signal in order; sent again, the same signals answer', async () => {
    const items = [1, 2, 3].map((n) => item(`batch-a-${n}`, { description: `batch: ${n}` }));
    const first = await batch(agent, items);
    assert.equal(first.status, 200, first.text);
    const results = first.json.results as Loose[];
    assert.deepEqual(
      results.map((r) => [r.idempotency_key, r.status, r.deliveries]),
      [
        ['batch-a-1', 201, 2],
        ['batch-a-2', 201, 2],
        ['batch-a-3', 201, 2],
      ],
    );
    for (const [i, r] of results.entries()) {
      const stored = await signalsDescribed(`batch: ${i + 1}`);
      assert.deepEqual(
        stored.map((s) => s.signal_id),
        [r.signal_id],
      );
    }
    // The spool sends the batch again (its answer was lost): nothing new, the same ids.
    const again = await batch(agent, items);
    assert.deepEqual(
      (again.json.results as Loose[]).map((r) => [r.status, r.signal_id]),
      results.map((r) => [200, r.signal_id]),
    );
    // A key a single POST used, and a key twice in one batch, answer that one signal.
    const single = await post(agent, { description: 'batch: single first' }, 'batch-b-1');
    const mixed = await batch(agent, [
      item('batch-b-1', { description: 'batch: ignored' }),
      item('batch-b-2', { description: 'batch: twice' }),
      item('batch-b-2', { description: 'batch: twice' }),
    ]);
    const [a, b, c] = mixed.json.results as Loose[];
    assert.deepEqual([a.status, a.signal_id], [200, single.json.signal_id]);
    assert.deepEqual([b.status, c.status].sort(), [200, 201]);
    assert.equal(b.signal_id, c.signal_id);
    assert.deepEqual(await signalsDescribed('batch: ignored'), []);
    assert.equal((await signalsDescribed('batch: twice')).length, 1);
  });

  it("applies the tenant's detection policy to each signal: a type turned off is 202 in its place", async () => {
    assert.equal((await putPolicy({ ssh_login_succeeded: { enabled: false } })).status, 200);
    const res = await batch(agent, [
      item('batch-c-1', { description: 'batch: kept' }),
      item('batch-c-2', { signal_type: 'ssh_login_succeeded', description: 'batch: off' }),
    ]);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      (res.json.results as Loose[]).map((r) => [r.status, r.signal_id === null]),
      [
        [201, false],
        [202, true],
      ],
    );
    assert.match(res.json.results[1].suppressed, /detection policy/);
    assert.deepEqual(await signalsDescribed('batch: off'), []);
  });

  it('refuses a whole batch with one bad signal, naming it, and writes none of it', async () => {
    const bad = await batch(agent, [
      item('batch-d-1', { description: 'batch: refused' }),
      item('batch-d-2', { severity: 9 }),
    ]);
    assertError(bad, 400, 'invalid_request');
    assert.match(bad.json.error.message, /body\/1\/severity/);
    const badKey = await batch(agent, [
      item('batch-d-3', { description: 'batch: refused' }),
      item('no spaces allowed'),
    ]);
    assertError(badKey, 400, 'invalid_idempotency_key');
    assert.match(badKey.json.error.message, /body\/1\/idempotency_key/);
    assertError(await batch(agent, [{ ...SIGNAL }]), 400, 'invalid_request'); // no key
    assertError(await batch(agent, []), 400, 'invalid_request');
    assertError(
      await batch(
        agent,
        Array.from({ length: 257 }, (_, i) => item(`batch-e-${i}`)),
      ),
      400,
      'invalid_request',
    );
    assertError(await batch(agent, [item('batch-d-4')], { 'idempotency-key': 'k' }), 400, 'invalid_request');
    assert.deepEqual(await signalsDescribed('batch: refused'), []);
    // A single signal's errors read as before.
    const single = await post(agent, { severity: 9 });
    assertError(single, 400, 'invalid_request');
    assert.match(single.json.error.message, /^body\/severity must be <= 5/);
  });

  it('takes the largest batch, 256 signals, at once', async () => {
    const res = await batch(
      agent2,
      Array.from({ length: 256 }, (_, i) => item(`batch-f-${i}`, { description: 'batch: large' })),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal((res.json.results as Loose[]).filter((r) => r.status === 201).length, 256);
  });
});
