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
import type { DatabaseConfig } from '../src/config.ts';
import { type BundleRequestTable, engineOf, openDatabase } from '../src/db/index.ts';
import { migrateTo, migrateToLatest } from '../src/db/migrations.ts';
import { isUniqueViolation } from '../src/errors.ts';
import {
  type ApiResult,
  addUser,
  api,
  enrollAgent,
  isErrorShape,
  makeTempDir,
  setupTenant,
  startTestServer,
  type TestServer,
} from './harness.ts';
import { databaseFlags, dropTestDatabase, ON_POSTGRES } from './test-database.ts';

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
