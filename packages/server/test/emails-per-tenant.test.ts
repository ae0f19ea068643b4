// Migration 0015 (issue 19, finding 7): emails become unique per tenant. On SQLite the users
// table is made again without its column UNIQUE, with foreign keys off meanwhile: the rows, the
// sessions and tokens that point at them, and the foreign keys themselves must come through.

import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import type { DatabaseConfig } from '../src/config.ts';
import { type Db, engineOf, openDatabase } from '../src/db/index.ts';
import { migrateTo, migrateToLatest } from '../src/db/migrations.ts';
import { isUniqueViolation } from '../src/kernel/errors.ts';
import { makeTempDir } from './harness.ts';
import { databaseFlags, dropTestDatabase, ON_POSTGRES } from './test-database.ts';

const at = '2026-11-27T10:00:00.000Z';
const dirs: string[] = [];
after(async () => {
  for (const d of dirs) {
    if (ON_POSTGRES) await dropTestDatabase(d);
    await rm(d, { recursive: true, force: true });
  }
});

async function databaseAt(migration: string): Promise<Db> {
  const dataDir = await makeTempDir('emails-0015');
  dirs.push(dataDir);
  let database: DatabaseConfig = { engine: 'sqlite' };
  if (ON_POSTGRES) {
    const url = String((await databaseFlags(dataDir)).database);
    database = { engine: 'postgres', url, password: undefined, display: url, poolSize: 2 };
  }
  const db = await openDatabase({ dataDir, database }, { migrations: 'none' });
  await migrateTo(db as Kysely<unknown>, engineOf(db), migration);
  return db;
}

const user = (id: string, tenant: string | null, email: string) => ({
  id,
  tenant_id: tenant,
  email,
  role: tenant === null ? ('support' as const) : ('admin' as const),
  password_hash: `scrypt$${id}`,
  created_at: at,
  last_login_at: null,
});

const session = (id: string, userId: string) => ({
  id,
  user_id: userId,
  token_hash: `hash-${id}`,
  created_at: at,
  last_seen_at: at,
  idle_expires_at: at,
  expires_at: at,
  revoked_at: null,
  ip: '127.0.0.1',
  user_agent: 'test',
});

async function refused(what: string, write: Promise<unknown>, unique = true): Promise<void> {
  await assert.rejects(write, (error: unknown) => !unique || isUniqueViolation(error), what);
}

describe('migration 0015: emails unique per tenant', () => {
  it('keeps every user, session and token, and the foreign keys; then one email per tenant, and once among staff', async () => {
    const db = await databaseAt('0014_fair_analysis_queue');
    try {
      for (const id of ['t_1', 't_2'])
        await db.insertInto('tenants').values({ id, name: id, created_at: at }).execute();
      await db
        .insertInto('users')
        .values([
          user('u_1', 't_1', 'ana@example.com'),
          user('u_2', 't_2', 'ben@example.com'),
          user('u_s', null, 'staff@example.com'),
        ])
        .execute();
      await db.insertInto('sessions').values(session('ses_1', 'u_1')).execute();
      await refused(
        'before: an email once across tenants',
        db
          .insertInto('users')
          .values(user('u_3', 't_2', 'ana@example.com'))
          .execute(),
      );

      await migrateToLatest(db as Kysely<unknown>, engineOf(db));

      const users = await db
        .selectFrom('users')
        .select(['id', 'tenant_id', 'email', 'password_hash'])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        users.map((u) => ({ ...u })),
        [
          { id: 'u_1', tenant_id: 't_1', email: 'ana@example.com', password_hash: 'scrypt$u_1' },
          { id: 'u_2', tenant_id: 't_2', email: 'ben@example.com', password_hash: 'scrypt$u_2' },
          { id: 'u_s', tenant_id: null, email: 'staff@example.com', password_hash: 'scrypt$u_s' },
        ],
      );
      assert.equal((await db.selectFrom('sessions').select('user_id').executeTakeFirstOrThrow()).user_id, 'u_1');

      // Another tenant may have the email now; the same tenant, and staff, still once.
      await db
        .insertInto('users')
        .values(user('u_3', 't_2', 'ana@example.com'))
        .execute();
      await refused(
        'the same tenant twice',
        db
          .insertInto('users')
          .values(user('u_4', 't_1', 'ana@example.com'))
          .execute(),
      );
      await refused(
        'staff twice',
        db
          .insertInto('users')
          .values(user('u_5', null, 'staff@example.com'))
          .execute(),
      );
      // The foreign keys still hold: a session of no user, a user of no tenant.
      await refused(
        'a session of no user',
        db.insertInto('sessions').values(session('ses_2', 'nobody')).execute(),
        false,
      );
      await refused(
        'a user of no tenant',
        db
          .insertInto('users')
          .values(user('u_6', 't_none', 'x@example.com'))
          .execute(),
        false,
      );
    } finally {
      await db.destroy();
    }
  });
});
