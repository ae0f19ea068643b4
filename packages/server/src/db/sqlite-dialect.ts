// Kysely over node:sqlite. Kysely's SqliteDialect expects better-sqlite3's shape; node:sqlite
// differs in two ways (DESIGN §8): parameters are spread, and a statement's `reader` flag is
// whether it returns columns.

import { closeSync, openSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { type SqliteDatabase, SqliteDialect } from 'kysely';

export function openSqlite(path: string): DatabaseSync {
  // Create the file owner-only before SQLite opens it: it holds credential hashes.
  closeSync(openSync(path, 'a', 0o600));
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('PRAGMA busy_timeout = 5000');
  return db;
}

/** Prepared statements by SQL text: preparing costs 20–150 µs, more than most queries run. */
const STATEMENT_CACHE_MAX = 500;

export function nodeSqliteDialect(db: DatabaseSync): SqliteDialect {
  const cache = new Map<string, { stmt: StatementSync; reader: boolean }>();
  const prepared = (sql: string) => {
    let entry = cache.get(sql);
    if (!entry) {
      const stmt = db.prepare(sql);
      entry = { stmt, reader: stmt.columns().length > 0 };
      if (cache.size >= STATEMENT_CACHE_MAX) cache.delete(cache.keys().next().value as string);
      cache.set(sql, entry);
    }
    return entry;
  };
  const database: SqliteDatabase = {
    close: () => db.close(),
    prepare(sql: string) {
      const { stmt, reader } = prepared(sql);
      return {
        reader,
        all: (parameters: ReadonlyArray<unknown>) => stmt.all(...(parameters as never[])),
        run: (parameters: ReadonlyArray<unknown>) => {
          const r = stmt.run(...(parameters as never[]));
          return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
        },
        iterate: (parameters: ReadonlyArray<unknown>) => stmt.iterate(...(parameters as never[])),
      };
    },
  };
  return new SqliteDialect({ database });
}
