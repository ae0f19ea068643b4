import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { engineOf } from './engine.ts';
import { migrateToLatest, pendingMigrations } from './migrations.ts';
import { createClient, createPool, type PostgresTarget, poolSizes } from './postgres.ts';
import type { DatabaseConfig } from './settings.ts';
import { startCheckpointer } from './sqlite-checkpointer.ts';
import { nodeSqliteDialect, openSqlite, Statements } from './sqlite-dialect.ts';
import type { Database } from './tables.ts';

export type { Engine } from './engine.ts';
export { engineOf } from './engine.ts';
export { DELIVERY_LOG_TERM } from './migrations/0017-delivery-log-response-headers.ts';
export { MIGRATION_NAMES } from './migrations.ts';
export type { DatabaseConfig } from './settings.ts';
export type { Statements } from './sqlite-dialect.ts';
export type * from './tables.ts';
export type Db = Kysely<Database>;

const statementsOf = new WeakMap<Db, Statements>();
const poolOf = new WeakMap<Db, { pool: pg.Pool; hot: pg.Pool; target: PostgresTarget }>();

/** Migrations this release has that the database has not run (serve on PostgreSQL without --migrate). */
export class MigrationsPendingError extends Error {
  readonly pending: string[];
  constructor(pending: string[]) {
    super(
      `the database needs ${pending.length} migration(s) this release brings (${pending.join(', ')}): run \`guard-server migrate\` with the same --database once, or start this replica with --migrate`,
    );
    this.name = 'MigrationsPendingError';
    this.pending = pending;
  }
}

export interface OpenOptions {
  /**
   * 'latest': apply pending migrations (under the engine's migration lock); 'verify': refuse
   * with MigrationsPendingError when any is pending (SQLite migrates instead: one process owns
   * it); 'none': leave them to the caller (`guard-server migrate`).
   */
  migrations: 'latest' | 'verify' | 'none';
}

/**
 * Opens the configured database: SQLite in the data dir (created if needed), or the
 * PostgreSQL database of `--database` (its data dir then holds only the master key).
 */
export async function openDatabase(
  target: { dataDir: string; database?: DatabaseConfig },
  options: OpenOptions = { migrations: 'latest' },
): Promise<Db> {
  const database = target.database ?? { engine: 'sqlite' };
  if (database.engine === 'sqlite') {
    mkdirSync(target.dataDir, { recursive: true, mode: 0o700 });
    const path = join(target.dataDir, 'guard.db');
    // WAL checkpoints run on a thread of their own, never in a commit on the event loop.
    const statements = new Statements(openSqlite(path, { checkpoints: false }));
    const checkpointer = startCheckpointer(path);
    const db = new Kysely<Database>({ dialect: nodeSqliteDialect(statements, () => checkpointer.stop()) });
    statementsOf.set(db, statements);
    if (options.migrations !== 'none') await migrateToLatest(db as Kysely<unknown>, 'sqlite');
    return db;
  }
  const pgTarget: PostgresTarget = { url: database.url, password: database.password, poolSize: database.poolSize };
  const sizes = poolSizes(database.poolSize);
  const pool = createPool(pgTarget, sizes.general);
  const hot = createPool(pgTarget, sizes.hot, true);
  // db.destroy() ends both pools.
  const both = { connect: () => pool.connect(), end: () => Promise.all([pool.end(), hot.end()]).then(() => {}) };
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: both }) });
  poolOf.set(db, { pool, hot, target: pgTarget });
  try {
    if (options.migrations === 'latest') await migrateToLatest(db as Kysely<unknown>, 'postgres');
    else if (options.migrations === 'verify') {
      const pending = await pendingMigrations(db as Kysely<unknown>, 'postgres');
      if (pending.length > 0) throw new MigrationsPendingError(pending);
    }
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return db;
}

/** Applies the pending migrations; returns the names this call applied (`guard-server migrate`). */
export function migrate(db: Db): Promise<string[]> {
  return migrateToLatest(db as Kysely<unknown>, engineOf(db));
}

/** Runs `fn` synchronously on the raw connection, holding Kysely's connection lock. SQLite only. */
export function withStatements<T>(db: Db, fn: (sql: Statements) => T): Promise<T> {
  const sql = statementsOf.get(db);
  if (!sql) throw new Error('withStatements needs an SQLite database opened by openDatabase');
  return db.connection().execute(async () => fn(sql));
}

/**
 * Runs `fn` synchronously inside one write transaction on the raw connection, holding
 * Kysely's connection lock so no other query interleaves. For the hot paths (signal ingest,
 * delivery claims and outcomes), where building a query with Kysely costs more than running it.
 * SQLite only.
 */
export function writeTransaction<T>(db: Db, fn: (sql: Statements) => T): Promise<T> {
  return withStatements(db, (sql) => {
    sql.db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn(sql);
      sql.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (sql.db.isTransaction) sql.db.exec('ROLLBACK');
      throw error;
    }
  });
}

function pgEntry(db: Db, what: string) {
  const entry = poolOf.get(db);
  if (!entry) throw new Error(`${what} needs a PostgreSQL database opened by openDatabase`);
  return entry;
}

/** The `pg` pool behind Kysely on a PostgreSQL database, for prepared SQL outside the delivery queue (agent keys). */
export function pgPool(db: Db): pg.Pool {
  return pgEntry(db, 'pgPool').pool;
}

/**
 * The delivery queue's own pool (enqueue, claims, outcomes): its connections' planner never
 * hashes, merges or scans a table whole (postgres.ts, HOT_PATH_PLANNER).
 */
export function pgHotPool(db: Db): pg.Pool {
  return pgEntry(db, 'pgHotPool').hot;
}

/** A connection outside the pool, for LISTEN; the caller ends it. */
export function pgListenClient(db: Db): pg.Client {
  return createClient(pgEntry(db, 'pgListenClient').target);
}

/**
 * Runs `fn` only if no other process runs the job `name` meanwhile: a maintenance job (the
 * expired-upload sweep, delivery retention, partition upkeep) that every replica schedules
 * but one at a time should do. PostgreSQL: a session advisory lock, tried without waiting and
 * held on one pooled connection until `fn` ends (a replica that dies mid-job drops its
 * connection, and with it the lock). SQLite: one process owns the database; `fn` just runs.
 * Resolves `{ ran: false }` when another replica holds the job.
 */
export async function exclusiveJob<T>(
  db: Db,
  name: string,
  fn: () => Promise<T>,
): Promise<{ ran: true; result: T } | { ran: false }> {
  if (engineOf(db) === 'sqlite') return { ran: true, result: await fn() };
  return db.connection().execute(async (conn) => {
    const key = sql<number>`hashtext(${`guard-job:${name}`})`;
    const got = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${JOB_LOCK_CLASS}, ${key}) as ok`.execute(conn);
    if (!got.rows[0]?.ok) return { ran: false as const };
    try {
      return { ran: true as const, result: await fn() };
    } finally {
      await sql`select pg_advisory_unlock(${JOB_LOCK_CLASS}, ${key})`.execute(conn);
    }
  });
}

/** The first key of our two-key advisory locks for jobs (the second is a hash of the job's name). */
const JOB_LOCK_CLASS = 0x6775; // "gu"
