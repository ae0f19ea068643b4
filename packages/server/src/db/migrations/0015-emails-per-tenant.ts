// An email is unique within its tenant, no longer across the service (issue 19, finding
// 7): an admin adding a user learns nothing of other tenants and cannot squat an address
// another tenant will need. Vendor staff (no tenant) stay unique among themselves. Sign-in
// finds the account by email and password (auth/sessions). Relaxing a constraint is safe
// while older replicas serve: their "email taken" still comes from a unique violation.

import { type Kysely, type Migration, sql } from 'kysely';
import type { Engine } from '../engine.ts';

export function emailsPerTenant(engine: Engine): Migration {
  const pg = engine === 'postgres';
  return {
    async up(db: Kysely<unknown>) {
      if (pg) await sql`alter table users drop constraint users_email_key`.execute(db);
      else await rebuildWithoutUniqueEmail(db);
      await db.schema
        .createIndex('users_tenant_email')
        .on('users')
        .columns(['tenant_id', 'email'])
        .unique()
        .where(sql.ref('tenant_id'), 'is not', null)
        .execute();
      await db.schema
        .createIndex('users_staff_email')
        .on('users')
        .column('email')
        .unique()
        .where(sql.ref('tenant_id'), 'is', null)
        .execute();
      await db.schema.createIndex('users_email').on('users').column('email').execute();
    },
  };
}

/**
 * SQLite cannot drop a column's UNIQUE: the users table is made again without it (SQLite's
 * "generalized ALTER TABLE" procedure: foreign keys off meanwhile, the copy in one transaction,
 * foreign_key_check before they come back on). Kysely runs SQLite's migrations outside a
 * transaction, so the pragma takes effect here.
 */
async function rebuildWithoutUniqueEmail(db: Kysely<unknown>): Promise<void> {
  const row = (
    await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'users'`.execute(db)
  ).rows[0];
  const unique = '"email" text not null unique';
  if (!row?.sql.includes(unique)) throw new Error(`the users table is not as migration 0015 expects: ${row?.sql}`);
  const create = row.sql
    .replace('CREATE TABLE "users"', 'CREATE TABLE "users_0015"')
    .replace(unique, '"email" text not null');
  await sql`PRAGMA foreign_keys = OFF`.execute(db);
  try {
    await db.transaction().execute(async (trx) => {
      await sql.raw(create).execute(trx);
      await sql`insert into users_0015 select * from users`.execute(trx);
      await sql`drop table users`.execute(trx);
      await sql`alter table users_0015 rename to users`.execute(trx);
      const broken = await sql`PRAGMA foreign_key_check`.execute(trx);
      if (broken.rows.length > 0)
        throw new Error(`foreign keys broken by the users rebuild: ${JSON.stringify(broken.rows)}`);
    });
  } finally {
    await sql`PRAGMA foreign_keys = ON`.execute(db);
  }
}
