// Invariants a check-then-act could break, under concurrent requests (issue 19, "every
// invariant, under concurrency"; the table in docs/security.md). In the PostgreSQL pass the
// requests go through two replicas on one database (two servers with their own pools, so
// their transactions really overlap under READ COMMITTED); on SQLite, which one process owns,
// they go to one server at once. Each race is run ROUNDS times and the invariant is checked
// after every round; a failure says in how many rounds it broke.

import assert from 'node:assert/strict';
import { copyFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { hashPassword, hashSecret, newId, newSecret, verifyPassword } from '../src/auth/secrets.ts';
import type { DatabaseConfig } from '../src/config.ts';
import { type BundleRequestTable, engineOf, openDatabase } from '../src/db/index.ts';
import { migrateTo, migrateToLatest } from '../src/db/migrations.ts';
import { isUniqueViolation } from '../src/kernel/errors.ts';
import { open } from '../src/kernel/secret-box.ts';
import { signIn } from './console-session.ts';
import {
  type ApiResult,
  addUser,
  api,
  enrollAgent,
  isErrorShape,
  makeTempDir,
  presign,
  setupTenant,
  sha256Hex,
  sleep,
  startTestServer,
  type TestServer,
} from './harness.ts';
import { databaseFlags, dropTestDatabase, ON_POSTGRES } from './test-database.ts';
import { seedDeliveries } from './webhook-harness.ts';

/** Rounds of each race: before the fixes PostgreSQL broke the first in 9 of 12 and the second in 5 of 5. */
const ROUNDS = 20;

let server: TestServer;
let replica: TestServer | undefined;
/** Where the racing requests go: the two replicas on PostgreSQL, the one server twice on SQLite. */
let targets: [string, string];

before(async () => {
  server = await startTestServer();
  if (ON_POSTGRES) {
    // A second replica on the same database, with the first one's master key.
    const dataDir = await makeTempDir('replica');
    await copyFile(join(server.dataDir, 'master.key'), join(dataDir, 'master.key'));
    const shared = (await databaseFlags(server.dataDir)) as Record<string, string>;
    replica = await startTestServer({ dataDir, clock: server.clock, flags: { ...shared, migrate: 'true' } });
  }
  targets = [server.url, replica?.url ?? server.url];
});
after(async () => {
  if (replica) {
    await replica.stop();
    await rm(replica.dataDir, { recursive: true, force: true });
  }
  await server.cleanup();
});

const isError = (res: ApiResult, status: number, code: string) =>
  res.status === status && isErrorShape(res.json) && res.json.error.code === code;

describe('the last admin of a tenant', () => {
  // Each round: a tenant with two admins, A and B; A demotes or removes B while B demotes or
  // removes A, both at once (on two replicas). One of them must win and the other be refused:
  // 409 last_admin, or — when the winner committed before the loser's request was even
  // authorised — 403 (the loser is a member now) or 401 (the loser was removed).
  const OPS = [
    ['PATCH', 'PATCH'],
    ['DELETE', 'DELETE'],
    ['PATCH', 'DELETE'],
  ] as const;
  const change = (base: string, method: 'PATCH' | 'DELETE', token: string, userId: string) =>
    api(base, method, `/v1/users/${userId}`, { token, body: method === 'PATCH' ? { role: 'member' } : undefined });
  const succeeded = (res: ApiResult) => res.status === 200 || res.status === 204;
  const refused = (res: ApiResult) =>
    isError(res, 409, 'last_admin') || isError(res, 403, 'forbidden') || res.status === 401;

  it(`two admins demoting or removing each other at once leave exactly one admin (${ROUNDS} rounds)`, async (t) => {
    const db = server.deps.db;
    const noAdmin: number[] = [];
    const wrongAnswers: string[] = [];
    let lastAdmin409 = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const tenant = await setupTenant(server);
      const bToken = await addUser(server, tenant.tenant_id, 'admin');
      const users = await db
        .selectFrom('users')
        .select(['id', 'email'])
        .where('tenant_id', '=', tenant.tenant_id)
        .execute();
      const a = users.find((u) => u.email === tenant.admin_email)?.id as string;
      const b = users.find((u) => u.email !== tenant.admin_email)?.id as string;
      const [opA, opB] = OPS[round % OPS.length];
      const answers = await Promise.all([
        change(targets[0], opA, tenant.admin_token, b),
        change(targets[1], opB, bToken, a),
      ]);
      const admins = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('tenant_id', '=', tenant.tenant_id)
        .where('role', '=', 'admin')
        .executeTakeFirstOrThrow();
      if (Number(admins.n) === 0) noAdmin.push(round);
      const won = answers.filter(succeeded).length;
      const lost = answers.filter(refused).length;
      lastAdmin409 += answers.filter((r) => isError(r, 409, 'last_admin')).length;
      if (won !== 1 || lost !== 1)
        wrongAnswers.push(`round ${round} (${opA}/${opB}): ${answers.map((r) => `${r.status} ${r.text}`).join(' | ')}`);
      else assert.equal(Number(admins.n), 1, `round ${round}: one change won, so one admin is left`);
    }
    t.diagnostic(`no admin left in ${noAdmin.length} of ${ROUNDS} rounds; ${lastAdmin409} refused with 409 last_admin`);
    assert.deepEqual(noAdmin, [], `no admin left in ${noAdmin.length} of ${ROUNDS} rounds`);
    assert.deepEqual(
      wrongAnswers,
      [],
      `both changes applied or both refused in ${wrongAnswers.length} of ${ROUNDS} rounds`,
    );
    // On two replicas the race is real: rounds are decided inside the transactions, not by
    // authorisation. (SQLite's one connection runs the first transaction before the second
    // request is authorised, so there the loser is 403 or 401.)
    if (ON_POSTGRES) assert.ok(lastAdmin409 > 0, 'no round ended in 409 last_admin: the requests did not overlap');
  });
});

describe('one open bundle request per server', () => {
  const PER_ROUND = 4;

  it(`${PER_ROUND} requests for one server at once open exactly one; the others are 409 request_active naming it (${ROUNDS} rounds)`, async (t) => {
    const db = server.deps.db;
    const tenant = await setupTenant(server);
    const opened: number[] = [];
    const wrongAnswers: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const agent = await enrollAgent(server.url, tenant.enroll_token, { hostname: `race-${round}.example` });
      const answers = await Promise.all(
        Array.from({ length: PER_ROUND }, (_, i) =>
          api(targets[i % 2], 'POST', `/v1/servers/${agent.agent_id}/bundle-requests`, { token: tenant.admin_token }),
        ),
      );
      const open = await db
        .selectFrom('bundle_requests')
        .select('id')
        .where('agent_id', '=', agent.agent_id)
        .where('state', 'in', ['queued', 'delivered', 'collecting', 'uploading'])
        .execute();
      opened.push(open.length);
      const created = answers.filter((r) => r.status === 201);
      const conflicts = answers.filter((r) => isError(r, 409, 'request_active'));
      const id = created[0]?.json.id;
      if (
        created.length !== 1 ||
        conflicts.length !== PER_ROUND - 1 ||
        !conflicts.every((r) => r.json.error.message.includes(`(${id}, queued)`))
      )
        wrongAnswers.push(`round ${round}: ${answers.map((r) => `${r.status} ${r.text}`).join(' | ')}`);
    }
    t.diagnostic(`open requests per round: ${opened.join(', ')}`);
    assert.deepEqual(
      opened.filter((n) => n !== 1),
      [],
      `open requests per round: ${opened.join(', ')} (more than one in ${opened.filter((n) => n > 1).length} of ${ROUNDS})`,
    );
    assert.deepEqual(
      wrongAnswers,
      [],
      `not one 201 and ${PER_ROUND - 1} × 409 in ${wrongAnswers.length} of ${ROUNDS} rounds`,
    );
  });

  it('a database that already holds several open requests of a server migrates: all but the newest are closed', async () => {
    // The database as the previous release left it: migrated up to 0011.
    const dataDir = await makeTempDir('dup-open');
    let database: DatabaseConfig = { engine: 'sqlite' };
    if (ON_POSTGRES) {
      const url = String((await databaseFlags(dataDir)).database);
      database = { engine: 'postgres', url, password: undefined, display: url, poolSize: 2 };
    }
    const db = await openDatabase({ dataDir, database }, { migrations: 'none' });
    try {
      await migrateTo(db as Kysely<unknown>, engineOf(db), '0011_detection');
      const at = '2026-11-21T10:00:00.000Z';
      await db.insertInto('tenants').values({ id: 't_1', name: 'one', created_at: at }).execute();
      for (const id of ['ag_1', 'ag_2'])
        await db
          .insertInto('agents')
          .values({
            id,
            tenant_id: 't_1',
            api_key_hash: `hash-${id}`,
            hostname: `${id}.example`,
            environment: 'test',
            agent_version: '0.1.0',
            enrolled_at: at,
            revoked_at: null,
            last_seen_at: null,
            uptime_seconds: null,
            agent_uptime_seconds: null,
            last_heartbeat_at: null,
          })
          .execute();
      const request = (id: string, agentId: string, state: BundleRequestTable['state'], minute: number) => ({
        id,
        tenant_id: 't_1',
        agent_id: agentId,
        state,
        requested_by: 'u_1',
        requested_by_role: 'admin' as const,
        created_at: `2026-11-21T10:0${minute}:00.000Z`,
        expires_at: '2026-11-21T11:30:00.000Z',
        delivered_at: null,
        deliveries: 0,
        acknowledged_at: null,
        collecting_at: null,
        uploading_at: null,
        finished_at: null,
        bundle_id: null,
        error_code: null,
        error_message: null,
        error_step: null,
        reason: null,
      });
      await db
        .insertInto('bundle_requests')
        .values([
          request('brq_old', 'ag_1', 'collecting', 1),
          request('brq_mid', 'ag_1', 'delivered', 2),
          request('brq_new', 'ag_1', 'queued', 3),
          request('brq_done', 'ag_1', 'done', 0),
          request('brq_other', 'ag_2', 'queued', 1),
        ])
        .execute();

      const applied = await migrateToLatest(db as Kysely<unknown>, engineOf(db));
      assert.equal(applied[0], '0012_one_open_bundle_request', applied.join());

      const rows = await db.selectFrom('bundle_requests').selectAll().orderBy('id').execute();
      const byId = new Map(rows.map((r) => [r.id, r]));
      assert.equal(byId.get('brq_new')?.state, 'queued', 'the newest open request stays open');
      assert.equal(byId.get('brq_other')?.state, 'queued', "another server's request is untouched");
      assert.equal(byId.get('brq_done')?.state, 'done');
      for (const id of ['brq_old', 'brq_mid']) {
        const r = byId.get(id);
        assert.equal(r?.state, 'interrupted', id);
        assert.match(r?.reason ?? '', /one open request per server/);
        assert.match(r?.finished_at ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      }
      // And the index holds from now on.
      await assert.rejects(
        db
          .insertInto('bundle_requests')
          .values(request('brq_again', 'ag_1', 'queued', 4))
          .execute(),
        (error) => isUniqueViolation(error),
      );
    } finally {
      await db.destroy();
      await dropTestDatabase(dataDir);
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });
    }
  });
});

describe('one running replay per endpoint', () => {
  const PER_ROUND = 4;

  it(`${PER_ROUND} replays of one endpoint started at once run exactly one; the others are 409 replay_running (${ROUNDS} rounds)`, async (t) => {
    const db = server.deps.db;
    const tenant = await setupTenant(server);
    const running: number[] = [];
    const wrongAnswers: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // `localhost` is refused on every connection (SSRF guard): nothing leaves the machine.
      const endpoint = await api(server.url, 'POST', '/v1/webhooks/endpoints', {
        token: tenant.admin_token,
        body: { name: `replay ${round}`, url: 'https://localhost/replay' },
      });
      assert.equal(endpoint.status, 201, endpoint.text);
      // More deliveries than a feed step re-queues: with the clock standing still the replay stays running.
      await seedDeliveries(server, tenant.tenant_id, endpoint.json.id, 50, new Date(server.clock.ms - 1000));
      const since = new Date(server.clock.ms - 60_000).toISOString();
      const answers = await Promise.all(
        Array.from({ length: PER_ROUND }, (_, i) =>
          api(targets[i % 2], 'POST', `/v1/webhooks/endpoints/${endpoint.json.id}/replay`, {
            token: tenant.admin_token,
            body: { since },
          }),
        ),
      );
      const rows = await db
        .selectFrom('webhook_replays')
        .select('id')
        .where('endpoint_id', '=', endpoint.json.id)
        .where('state', '=', 'running')
        .execute();
      running.push(rows.length);
      const started = answers.filter((r) => r.status === 202);
      const conflicts = answers.filter((r) => isError(r, 409, 'replay_running'));
      if (started.length !== 1 || conflicts.length !== PER_ROUND - 1)
        wrongAnswers.push(`round ${round}: ${answers.map((r) => `${r.status} ${r.text}`).join(' | ')}`);
      // Cancelled, so that a later test moving the clock does not set them feeding.
      for (const r of rows)
        await api(server.url, 'POST', `/v1/webhooks/replays/${r.id}/cancel`, { token: tenant.admin_token });
    }
    t.diagnostic(`running replays per round: ${running.join(', ')}`);
    assert.deepEqual(
      running.filter((n) => n !== 1),
      [],
      `running replays per round: ${running.join(', ')} (more than one in ${running.filter((n) => n > 1).length} of ${ROUNDS})`,
    );
    assert.deepEqual(
      wrongAnswers,
      [],
      `not one 202 and ${PER_ROUND - 1} × 409 in ${wrongAnswers.length} of ${ROUNDS} rounds`,
    );
  });
});

describe('one secret rotation in progress per endpoint', () => {
  const PER_ROUND = 4;

  it(`${PER_ROUND} rotations of one endpoint at once apply exactly one, and the old secret stays valid; the others are 409 rotation_in_progress (${ROUNDS} rounds)`, async (t) => {
    const db = server.deps.db;
    const key = server.deps.masterKey.derive('webhook-secrets');
    const tenant = await setupTenant(server);
    const broken: string[] = [];
    const wrongAnswers: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const endpoint = await api(server.url, 'POST', '/v1/webhooks/endpoints', {
        token: tenant.admin_token,
        body: { name: `rotation ${round}`, url: 'https://localhost/rotation' },
      });
      assert.equal(endpoint.status, 201, endpoint.text);
      const id: string = endpoint.json.id;
      const answers = await Promise.all(
        Array.from({ length: PER_ROUND }, (_, i) =>
          api(targets[i % 2], 'POST', `/v1/webhooks/endpoints/${id}/rotate-secret`, {
            token: tenant.admin_token,
            body: { grace_seconds: 3600 },
          }),
        ),
      );
      const row = await db
        .selectFrom('webhook_endpoints')
        .select(['secret_sealed', 'previous_secret_sealed'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const rotations = await db
        .selectFrom('audit_log')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('action', '=', 'webhook_endpoint.secret_rotate')
        .where('target', 'like', `${id} %`)
        .executeTakeFirstOrThrow();
      // Two rotations applied would leave the first one's secret as the old one: receivers
      // that still hold the secret the endpoint had would fail during the grace period.
      const previous = row.previous_secret_sealed ? open(key, row.previous_secret_sealed, id) : null;
      if (Number(rotations.n) !== 1 || previous !== endpoint.json.secret)
        broken.push(`round ${round}: ${rotations.n} rotations, the old secret ${previous === null ? 'gone' : 'kept'}`);
      const rotated = answers.filter((r) => r.status === 200);
      const conflicts = answers.filter((r) => isError(r, 409, 'rotation_in_progress'));
      if (
        rotated.length !== 1 ||
        conflicts.length !== PER_ROUND - 1 ||
        rotated[0].json.secret !== open(key, row.secret_sealed, id)
      )
        wrongAnswers.push(`round ${round}: ${answers.map((r) => `${r.status} ${r.text.slice(0, 200)}`).join(' | ')}`);
    }
    t.diagnostic(`more than one rotation applied in ${broken.length} of ${ROUNDS} rounds`);
    assert.deepEqual(broken, [], `more than one rotation applied in ${broken.length} of ${ROUNDS} rounds`);
    assert.deepEqual(
      wrongAnswers,
      [],
      `not one 200 (with the secret now current) and ${PER_ROUND - 1} × 409 in ${wrongAnswers.length} of ${ROUNDS} rounds`,
    );
  });
});

describe('an email once per tenant', () => {
  const PER_ROUND = 4;

  it(`${PER_ROUND} adds of one email to one tenant at once create exactly one user; the others are 409 email_taken; another tenant may add it too (${ROUNDS} rounds)`, async (t) => {
    const db = server.deps.db;
    const [one, two] = [await setupTenant(server), await setupTenant(server)];
    const counts: number[] = [];
    const wrongAnswers: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const email = `same-${round}@race.example`;
      const answers = await Promise.all(
        Array.from({ length: PER_ROUND }, (_, i) =>
          api(targets[i % 2], 'POST', '/v1/users', {
            token: (i < PER_ROUND - 1 ? one : two).admin_token,
            body: { email, role: 'member' },
          }),
        ),
      );
      const rows = await db.selectFrom('users').select('tenant_id').where('email', '=', email).execute();
      const inOne = rows.filter((r) => r.tenant_id === one.tenant_id).length;
      counts.push(inOne);
      const mine = answers.slice(0, PER_ROUND - 1);
      if (
        mine.filter((r) => r.status === 201).length !== 1 ||
        mine.filter((r) => isError(r, 409, 'email_taken')).length !== PER_ROUND - 2 ||
        answers[PER_ROUND - 1].status !== 201 ||
        rows.length !== 2
      )
        wrongAnswers.push(`round ${round}: ${answers.map((r) => `${r.status} ${r.text.slice(0, 200)}`).join(' | ')}`);
    }
    t.diagnostic(`users of the email in the first tenant per round: ${counts.join(', ')}`);
    assert.deepEqual(
      counts.filter((n) => n !== 1),
      [],
      `users per round: ${counts.join(', ')}`,
    );
    assert.deepEqual(wrongAnswers, [], `wrong answers in ${wrongAnswers.length} of ${ROUNDS} rounds`);
  });
});

describe('a user removed while signing in', () => {
  const SIGN_INS = 3;

  it(`removing a user while they sign in at the other replica ends cleanly: 204 for the removal, 200 or 401 for each sign-in, no session left (${ROUNDS} rounds)`, async (t) => {
    const db = server.deps.db;
    const tenant = await setupTenant(server);
    const wrongAnswers: string[] = [];
    let signedInFirst = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const email = `leaving-${round}@race.example`;
      const password = `the password of round ${round}`;
      const added = await api(server.url, 'POST', '/v1/users', {
        token: tenant.admin_token,
        body: { email, role: 'member' },
      });
      assert.equal(added.status, 201, added.text);
      const url: string = added.json.set_password_url;
      const set = await api(server.url, 'POST', '/v1/auth/set-password', {
        body: { token: url.slice(url.indexOf('#') + 1), password },
      });
      assert.equal(set.status, 204, set.text);
      // The removal starts 0–95 ms after the sign-ins, so that over the rounds it meets them at
      // every step: before their password check ends, between it and the session's insert, after.
      const [removed, ...signIns] = await Promise.all([
        sleep((round % 20) * 5).then(() =>
          api(targets[0], 'DELETE', `/v1/users/${added.json.id}`, { token: tenant.admin_token }),
        ),
        ...Array.from({ length: SIGN_INS }, () =>
          api(targets[1], 'POST', '/v1/auth/login', { body: { email, password } }),
        ),
      ]);
      signedInFirst += signIns.filter((r) => r.status === 200).length;
      server.clock.advance(16 * 60_000); // this round's refused sign-ins leave the limits' window
      const left = await db.selectFrom('sessions').select('id').where('user_id', '=', added.json.id).execute();
      if (
        removed.status !== 204 ||
        signIns.some((r) => r.status !== 200 && !isError(r, 401, 'invalid_credentials')) ||
        left.length > 0
      )
        wrongAnswers.push(
          `round ${round}: removal ${removed.status} ${removed.text.slice(0, 200)}; sign-ins ${signIns.map((r) => r.status).join(', ')}; sessions left ${left.length}`,
        );
    }
    t.diagnostic(`sign-ins that came before the removal: ${signedInFirst} of ${ROUNDS * SIGN_INS}`);
    assert.deepEqual(wrongAnswers, [], `wrong in ${wrongAnswers.length} of ${ROUNDS} rounds`);
  });
});

describe('a set-password link works once', () => {
  const PER_ROUND = 4;

  it(`one link used ${PER_ROUND} times at once, each with its own password, sets exactly one; the others are 410 link_expired (${ROUNDS} rounds)`, async (t) => {
    const db = server.deps.db;
    const tenant = await setupTenant(server);
    const passwordsSet: number[] = [];
    const wrongAnswers: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const added = await api(server.url, 'POST', '/v1/users', {
        token: tenant.admin_token,
        body: { email: `link-${round}@race.example`, role: 'member' },
      });
      assert.equal(added.status, 201, added.text);
      const url: string = added.json.set_password_url;
      const token = url.slice(url.indexOf('#') + 1);
      const passwords = Array.from({ length: PER_ROUND }, (_, i) => `the password of use ${i} in round ${round}`);
      const answers = await Promise.all(
        passwords.map((password, i) =>
          api(targets[i % 2], 'POST', '/v1/auth/set-password', { body: { token, password } }),
        ),
      );
      const succeeded = answers.filter((r) => r.status === 204);
      passwordsSet.push(succeeded.length);
      const user = await db
        .selectFrom('users')
        .select('password_hash')
        .where('id', '=', added.json.id)
        .executeTakeFirstOrThrow();
      const winner = answers.findIndex((r) => r.status === 204);
      if (
        succeeded.length !== 1 ||
        answers.filter((r) => isError(r, 410, 'link_expired')).length !== PER_ROUND - 1 ||
        !(await verifyPassword(passwords[winner], user.password_hash))
      )
        wrongAnswers.push(`round ${round}: ${answers.map((r) => `${r.status} ${r.text}`).join(' | ')}`);
    }
    t.diagnostic(`passwords set per round: ${passwordsSet.join(', ')}`);
    assert.deepEqual(
      passwordsSet.filter((n) => n !== 1),
      [],
      `passwords set per round: ${passwordsSet.join(', ')} (more than one in ${passwordsSet.filter((n) => n > 1).length} of ${ROUNDS})`,
    );
    assert.deepEqual(
      wrongAnswers,
      [],
      `not one 204 (its password the one stored) and ${PER_ROUND - 1} × 410 in ${wrongAnswers.length} of ${ROUNDS} rounds`,
    );
  });
});

describe("an enrolment token's use limit and expiry", () => {
  const MAX_USES = 3;
  const PER_ROUND = 8;
  const enroll = (base: string, token: string, hostname: string) =>
    api(base, 'POST', '/v1/agents/enroll', {
      body: { token, hostname, environment: 'test', agent_version: '0.1.0' },
    });
  const agentsNamed = (tenantId: string, prefix: string) =>
    server.deps.db
      .selectFrom('agents')
      .select(['id', 'enrolled_at'])
      .where('tenant_id', '=', tenantId)
      .where('hostname', 'like', `${prefix}%`)
      .execute();
  const usesOf = async (id: string) =>
    Number(
      (
        await server.deps.db
          .selectFrom('enrollment_tokens')
          .select('uses')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).uses,
    );

  it(`a token of ${MAX_USES} uses used ${PER_ROUND} times at once enrols exactly ${MAX_USES} agents; the others are 401 invalid_enrollment_token (${ROUNDS} rounds)`, async (t) => {
    const tenant = await setupTenant(server);
    const enrolled: number[] = [];
    const wrongAnswers: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const created = await api(server.url, 'POST', '/v1/enrollment-tokens', {
        token: tenant.admin_token,
        body: { max_uses: MAX_USES },
      });
      assert.equal(created.status, 201, created.text);
      const answers = await Promise.all(
        Array.from({ length: PER_ROUND }, (_, i) =>
          enroll(targets[i % 2], created.json.token, `uses-${round}-${i}.example`),
        ),
      );
      const agents = await agentsNamed(tenant.tenant_id, `uses-${round}-`);
      const uses = await usesOf(created.json.id);
      enrolled.push(agents.length);
      if (
        uses !== agents.length ||
        answers.filter((r) => r.status === 201).length !== MAX_USES ||
        answers.filter((r) => isError(r, 401, 'invalid_enrollment_token')).length !== PER_ROUND - MAX_USES
      )
        wrongAnswers.push(`round ${round}: uses ${uses}; ${answers.map((r) => `${r.status} ${r.text}`).join(' | ')}`);
    }
    t.diagnostic(`agents enrolled per round: ${enrolled.join(', ')}`);
    assert.deepEqual(
      enrolled.filter((n) => n !== MAX_USES),
      [],
      `agents enrolled per round: ${enrolled.join(', ')} (more than ${MAX_USES} in ${enrolled.filter((n) => n > MAX_USES).length} of ${ROUNDS})`,
    );
    assert.deepEqual(
      wrongAnswers,
      [],
      `not ${MAX_USES} × 201 and ${PER_ROUND - MAX_USES} × 401, uses counted, in ${wrongAnswers.length} of ${ROUNDS} rounds`,
    );
  });

  it(`a token that expires while ${PER_ROUND} enrolments with it run enrols no agent at or after its expiry (${ROUNDS} rounds)`, async (t) => {
    const tenant = await setupTenant(server);
    const late: string[] = [];
    const wrongAnswers: string[] = [];
    const before: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const created = await api(server.url, 'POST', '/v1/enrollment-tokens', {
        token: tenant.admin_token,
        body: { expires_in_seconds: 60 },
      });
      assert.equal(created.status, 201, created.text);
      const expiresAt: string = created.json.expires_at;
      // One enrolment sent per turn of the event loop, the clock reaching the expiry after a
      // different number of them each round: the ones in flight race it.
      const requests: Promise<ApiResult>[] = [];
      for (let i = 0; i < PER_ROUND; i++) {
        if (i === round % (PER_ROUND + 1)) server.clock.ms = Date.parse(expiresAt);
        requests.push(enroll(targets[i % 2], created.json.token, `expiry-${round}-${i}.example`));
        await sleep(0);
      }
      server.clock.ms = Date.parse(expiresAt);
      const answers = await Promise.all(requests);
      const agents = await agentsNamed(tenant.tenant_id, `expiry-${round}-`);
      const uses = await usesOf(created.json.id);
      before.push(agents.length);
      const after = agents.filter((a) => a.enrolled_at >= expiresAt);
      if (after.length > 0) late.push(`round ${round}: ${after.map((a) => a.enrolled_at).join(', ')}`);
      if (
        uses !== agents.length ||
        answers.filter((r) => r.status === 201).length !== agents.length ||
        !answers.every((r) => r.status === 201 || isError(r, 401, 'invalid_enrollment_token'))
      )
        wrongAnswers.push(`round ${round}: uses ${uses}; ${answers.map((r) => `${r.status} ${r.text}`).join(' | ')}`);
    }
    t.diagnostic(`agents enrolled before the expiry per round: ${before.join(', ')}`);
    assert.deepEqual(late, [], `agents enrolled at or after the expiry in ${late.length} of ${ROUNDS} rounds`);
    assert.deepEqual(
      wrongAnswers,
      [],
      `uses or answers not matching the agents enrolled in ${wrongAnswers.length} of ${ROUNDS} rounds`,
    );
  });
});

describe("a tenant's upload quota", () => {
  const PER_ROUND = 8;

  it(`${PER_ROUND} presigns of one tenant at once never reserve more than its quota (${ROUNDS} rounds)`, async (t) => {
    const db = server.deps.db;
    const quota = server.deps.config.limits.tenantQuotaBytes;
    const size = server.deps.config.maxBundleBytes;
    // One bundle's reservation is held before the race: the rest of the quota fits `fits` more.
    const fits = Math.floor((quota - size) / size);
    assert.ok(fits > 0 && fits < PER_ROUND, `the quota (${quota}) holds ${fits} more bundles of ${size} bytes`);
    const overQuota: string[] = [];
    const wrongAnswers: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const tenant = await setupTenant(server);
      const agent = await enrollAgent(server.url, tenant.enroll_token);
      const ask = (base: string, i: number) =>
        presign(base, agent.api_key, { size, sha256: sha256Hex(`${round}-${i}`) });
      const held = await ask(server.url, -1);
      assert.equal(held.status, 200, held.text);
      const answers = await Promise.all(Array.from({ length: PER_ROUND }, (_, i) => ask(targets[i % 2], i)));
      const reserved = await db
        .selectFrom('uploads')
        .select((eb) => eb.fn.sum<number>('size').as('n'))
        .where('tenant_id', '=', tenant.tenant_id)
        .executeTakeFirstOrThrow();
      if (Number(reserved.n) > quota) overQuota.push(`round ${round}: ${reserved.n} of ${quota} bytes reserved`);
      if (
        answers.filter((r) => r.status === 200).length !== fits ||
        answers.filter((r) => isError(r, 403, 'quota_exceeded')).length !== PER_ROUND - fits
      )
        wrongAnswers.push(`round ${round}: ${answers.map((r) => `${r.status} ${r.text.slice(0, 120)}`).join(' | ')}`);
    }
    t.diagnostic(`more than the quota reserved in ${overQuota.length} of ${ROUNDS} rounds`);
    assert.deepEqual(overQuota, [], `more than the quota reserved in ${overQuota.length} of ${ROUNDS} rounds`);
    assert.deepEqual(
      wrongAnswers,
      [],
      `not ${fits} × 200 and ${PER_ROUND - fits} × 403 quota_exceeded in ${wrongAnswers.length} of ${ROUNDS} rounds`,
    );
  });
});

describe('revoked agent keys, API tokens and sessions', () => {
  // Each round: the credential is used over and over at both targets while it is revoked at
  // both at once. A use that began before a revoke answered may still pass (the principal is
  // read when the request starts); one sent after must be 401. The two revokes must agree
  // without a 5xx: the key's revoke answers the same record twice, a token's or a session's
  // answers 204 and then 404 (it is no longer there to revoke).
  const USES_AFTER = 2;
  const PASSWORD = 'correct horse battery staple';

  interface Use {
    sentAt: number;
    res: ApiResult;
  }

  /**
   * Uses `use` at each target until it was sent USES_AFTER times after a revoke answered;
   * `revoke` runs at each target at once as soon as the first use answered.
   */
  async function raceRevoke(
    use: (base: string) => Promise<ApiResult>,
    revoke: (base: string) => Promise<ApiResult>,
  ): Promise<{ revokes: ApiResult[]; uses: Use[]; revokedAt: number }> {
    let revokedAt = Number.POSITIVE_INFINITY;
    let startRevokes = () => {};
    const revoking = new Promise<void>((resolve) => {
      startRevokes = resolve;
    }).then(() =>
      Promise.all(
        targets.map(async (base) => {
          const res = await revoke(base);
          revokedAt = Math.min(revokedAt, performance.now());
          return res;
        }),
      ),
    );
    const uses = await Promise.all(
      targets.map(async (base) => {
        const seen: Use[] = [];
        while (seen.filter((u) => u.sentAt > revokedAt).length < USES_AFTER && seen.length < 200) {
          const sentAt = performance.now();
          seen.push({ sentAt, res: await use(base) });
          startRevokes();
        }
        return seen;
      }),
    );
    return { revokes: await revoking, uses: uses.flat(), revokedAt };
  }

  /**
   * Checks a round: `late` gets the uses after the revoke that still passed, `wrong` any other
   * answer out of place (a use answers `passes` or 401).
   */
  function judge(
    round: number,
    race: { revokes: ApiResult[]; uses: Use[]; revokedAt: number },
    revokesAgree: (revokes: ApiResult[]) => boolean,
    late: string[],
    wrong: string[],
    passes = 200,
  ): void {
    const passed = race.uses.filter((u) => u.sentAt > race.revokedAt && u.res.status !== 401);
    if (passed.length > 0) late.push(`round ${round}: ${passed.map((u) => u.res.status).join(', ')}`);
    const odd = race.uses.filter((u) => u.res.status !== passes && u.res.status !== 401);
    if (odd.length > 0 || !revokesAgree(race.revokes))
      wrong.push(
        `round ${round}: revokes ${race.revokes.map((r) => `${r.status} ${r.text.slice(0, 200)}`).join(' | ')}; uses ${odd.map((u) => `${u.res.status} ${u.res.text}`).join(' | ')}`,
      );
  }

  const oneRevokedOneGone = (revokes: ApiResult[]) =>
    revokes.filter((r) => r.status === 204).length === 1 &&
    revokes.filter((r) => isError(r, 404, 'not_found')).length === 1;

  /** A member with an API token (to revoke the other credentials with) and a password; the user's id and email. */
  async function newMember(tenantId: string) {
    const token = await addUser(server, tenantId, 'member');
    const db = server.deps.db;
    const { user_id: id } = await db
      .selectFrom('api_tokens')
      .select('user_id')
      .where('token_hash', '=', hashSecret(token))
      .executeTakeFirstOrThrow();
    // Stored normalised, as sign-in looks it up.
    const email = `${id.toLowerCase()}@test.local`;
    await db
      .updateTable('users')
      .set({ email, password_hash: await hashPassword(PASSWORD) })
      .where('id', '=', id)
      .execute();
    return { id, email, token };
  }

  it(`an agent key revoked twice at once while in use: both revokes answer the same record, and no use after them passes (${ROUNDS} rounds)`, async (t) => {
    const db = server.deps.db;
    const tenant = await setupTenant(server);
    const late: string[] = [];
    const wrong: string[] = [];
    let usesBefore = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const agent = await enrollAgent(server.url, tenant.enroll_token, { hostname: `revoke-${round}.example` });
      const race = await raceRevoke(
        (base) => api(base, 'GET', '/v1/agent/commands?wait=0', { token: agent.api_key }),
        (base) => api(base, 'POST', `/v1/agents/${agent.agent_id}/revoke`, { token: tenant.admin_token }),
      );
      usesBefore += race.uses.filter((u) => u.sentAt <= race.revokedAt && u.res.status === 200).length;
      const audited = await db
        .selectFrom('audit_log')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('action', '=', 'agent.revoke')
        .where('target', '=', agent.agent_id)
        .executeTakeFirstOrThrow();
      judge(
        round,
        race,
        ([a, b]) =>
          a.status === 200 &&
          b.status === 200 &&
          a.json.revoked_at !== null &&
          a.json.revoked_at === b.json.revoked_at &&
          Number(audited.n) === 1,
        late,
        wrong,
      );
    }
    t.diagnostic(`${usesBefore} uses sent before a revoke answered passed`);
    assert.deepEqual(late, [], `a use after the revoke passed in ${late.length} of ${ROUNDS} rounds`);
    assert.deepEqual(
      wrong,
      [],
      `revokes disagreeing or a use answered neither 200 nor 401 in ${wrong.length} of ${ROUNDS} rounds`,
    );
  });

  it(`an API token revoked twice at once while in use: 204 and 404, and no use after them passes (${ROUNDS} rounds)`, async (t) => {
    const tenant = await setupTenant(server);
    const late: string[] = [];
    const wrong: string[] = [];
    let usesBefore = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const member = await newMember(tenant.tenant_id);
      const created = await api(server.url, 'POST', '/v1/me/tokens', { token: member.token, body: { name: 'victim' } });
      assert.equal(created.status, 201, created.text);
      const race = await raceRevoke(
        (base) => api(base, 'GET', '/v1/me/tokens', { token: created.json.token }),
        (base) => api(base, 'DELETE', `/v1/me/tokens/${created.json.id}`, { token: member.token }),
      );
      usesBefore += race.uses.filter((u) => u.sentAt <= race.revokedAt && u.res.status === 200).length;
      judge(round, race, oneRevokedOneGone, late, wrong);
    }
    t.diagnostic(`${usesBefore} uses sent before a revoke answered passed`);
    assert.deepEqual(late, [], `a use after the revoke passed in ${late.length} of ${ROUNDS} rounds`);
    assert.deepEqual(
      wrong,
      [],
      `revokes not 204 and 404, or a use answered neither 200 nor 401, in ${wrong.length} of ${ROUNDS} rounds`,
    );
  });

  it(`API tokens created with a token from before a reset through a set-password link, while it runs, do not outlive it (${ROUNDS} rounds)`, async (t) => {
    // A reset revokes every API token of the account. A token created by a request that was
    // authenticated before the reset committed must not be left live after it: that would
    // hand whoever held the old token a new one.
    const db = server.deps.db;
    const tenant = await setupTenant(server);
    const survived: string[] = [];
    const late: string[] = [];
    const wrong: string[] = [];
    let created = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const added = await api(server.url, 'POST', '/v1/users', {
        token: tenant.admin_token,
        body: { email: `tokens-${round}@race.example`, role: 'member' },
      });
      assert.equal(added.status, 201, added.text);
      const held = newSecret('userToken');
      await db
        .insertInto('api_tokens')
        .values({
          id: newId('tok'),
          user_id: added.json.id,
          token_hash: hashSecret(held),
          name: 'held by someone else',
          created_at: server.clock.now().toISOString(),
          revoked_at: null,
        })
        .execute();
      const url: string = added.json.set_password_url;
      const link = url.slice(url.indexOf('#') + 1);
      const race = await raceRevoke(
        (base) => api(base, 'POST', '/v1/me/tokens', { token: held, body: { name: 'made during the reset' } }),
        (base) =>
          api(base, 'POST', '/v1/auth/set-password', {
            body: { token: link, password: 'the new password after the reset' },
          }),
      );
      created += race.uses.filter((u) => u.res.status === 201).length;
      const live = await db
        .selectFrom('api_tokens')
        .select('id')
        .where('user_id', '=', added.json.id)
        .where('revoked_at', 'is', null)
        .execute();
      if (live.length > 0) survived.push(`round ${round}: ${live.length} live`);
      judge(
        round,
        race,
        (resets) =>
          resets.filter((r) => r.status === 204).length === 1 &&
          resets.filter((r) => isError(r, 410, 'link_expired')).length === 1,
        late,
        wrong,
        201,
      );
    }
    t.diagnostic(`${created} tokens created; one outlived the reset in ${survived.length} of ${ROUNDS} rounds`);
    assert.deepEqual(survived, [], `a token outlived the reset in ${survived.length} of ${ROUNDS} rounds`);
    assert.deepEqual(late, [], `a token was created after the reset answered in ${late.length} of ${ROUNDS} rounds`);
    assert.deepEqual(
      wrong,
      [],
      `resets not 204 and 410, or a creation neither 201 nor 401, in ${wrong.length} of ${ROUNDS} rounds`,
    );
  });

  it(`sign-ins with the old password racing a reset through a set-password link leave no live session (${ROUNDS} rounds)`, async (t) => {
    // A reset ends every session of the account (it may be in someone else's hands). A sign-in
    // whose password check began before the reset committed must not add a session after it.
    const LOGINS = 3;
    const db = server.deps.db;
    const tenant = await setupTenant(server);
    const oldHash = await hashPassword(PASSWORD);
    const survived: string[] = [];
    const wrong: string[] = [];
    let signedIn = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const email = `reset-${round}@race.example`;
      const added = await api(server.url, 'POST', '/v1/users', {
        token: tenant.admin_token,
        body: { email, role: 'member' },
      });
      assert.equal(added.status, 201, added.text);
      await db.updateTable('users').set({ password_hash: oldHash }).where('id', '=', added.json.id).execute();
      const url: string = added.json.set_password_url;
      const logins = Array.from({ length: LOGINS }, (_, i) =>
        api(targets[i % 2], 'POST', '/v1/auth/login', { body: { email, password: PASSWORD } }),
      );
      // The reset lands at a different point of the sign-ins' password checks each round.
      await sleep((round % 5) * 10);
      const reset = await api(targets[round % 2], 'POST', '/v1/auth/set-password', {
        body: { token: url.slice(url.indexOf('#') + 1), password: 'the new password after the reset' },
      });
      const answers = await Promise.all(logins);
      signedIn += answers.filter((r) => r.status === 200).length;
      const live = await db
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', added.json.id)
        .where('revoked_at', 'is', null)
        .execute();
      if (live.length > 0) survived.push(`round ${round}: ${live.length} live`);
      if (reset.status !== 204 || !answers.every((r) => r.status === 200 || isError(r, 401, 'invalid_credentials')))
        wrong.push(`round ${round}: reset ${reset.status}; ${answers.map((r) => `${r.status} ${r.text}`).join(' | ')}`);
    }
    t.diagnostic(
      `${signedIn} of ${ROUNDS * LOGINS} sign-ins answered 200; a session outlived the reset in ${survived.length} of ${ROUNDS} rounds`,
    );
    assert.deepEqual(survived, [], `a session outlived the reset in ${survived.length} of ${ROUNDS} rounds`);
    assert.deepEqual(
      wrong,
      [],
      `a reset not 204 or a sign-in neither 200 nor 401 in ${wrong.length} of ${ROUNDS} rounds`,
    );
  });

  it(`a session revoked twice at once while in use: 204 and 404, and no use after them passes (${ROUNDS} rounds)`, async (t) => {
    const db = server.deps.db;
    const tenant = await setupTenant(server);
    const late: string[] = [];
    const wrong: string[] = [];
    let usesBefore = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const member = await newMember(tenant.tenant_id);
      const browser = await signIn(server.url, member.email, PASSWORD);
      const session = await db
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', member.id)
        .executeTakeFirstOrThrow();
      const race = await raceRevoke(
        (base) => api(base, 'GET', '/v1/auth/session', { headers: { cookie: browser.cookie } }),
        (base) => api(base, 'DELETE', `/v1/me/sessions/${session.id}`, { token: member.token }),
      );
      usesBefore += race.uses.filter((u) => u.sentAt <= race.revokedAt && u.res.status === 200).length;
      judge(round, race, oneRevokedOneGone, late, wrong);
    }
    t.diagnostic(`${usesBefore} uses sent before a revoke answered passed`);
    assert.deepEqual(late, [], `a use after the revoke passed in ${late.length} of ${ROUNDS} rounds`);
    assert.deepEqual(
      wrong,
      [],
      `revokes not 204 and 404, or a use answered neither 200 nor 401, in ${wrong.length} of ${ROUNDS} rounds`,
    );
  });
});
