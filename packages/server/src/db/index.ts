import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely } from 'kysely';
import { migrateToLatest } from './migrations.ts';
import { nodeSqliteDialect, openSqlite, Statements } from './sqlite-dialect.ts';
import type { Database } from './tables.ts';

export type { Statements } from './sqlite-dialect.ts';
export type * from './tables.ts';
export type Db = Kysely<Database>;

const statementsOf = new WeakMap<Db, Statements>();

/** Opens (creating if needed) the embedded SQLite database in the data dir and migrates it. */
export async function openDatabase(dataDir: string): Promise<Db> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const statements = new Statements(openSqlite(join(dataDir, 'guard.db')));
  const db = new Kysely<Database>({ dialect: nodeSqliteDialect(statements) });
  statementsOf.set(db, statements);
  await migrateToLatest(db as Kysely<unknown>);
  return db;
}

/** Runs `fn` synchronously on the raw connection, holding Kysely's connection lock. */
export function withStatements<T>(db: Db, fn: (sql: Statements) => T): Promise<T> {
  const sql = statementsOf.get(db);
  if (!sql) throw new Error('withStatements needs a database opened by openDatabase');
  return db.connection().execute(async () => fn(sql));
}

/**
 * Runs `fn` synchronously inside one write transaction on the raw connection, holding
 * Kysely's connection lock so no other query interleaves. For the hot paths (signal ingest,
 * delivery claims and outcomes), where building a query with Kysely costs more than running it.
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
