// Kysely over node:sqlite. Kysely's SqliteDialect expects better-sqlite3's shape; node:sqlite
// differs in two ways (DESIGN §8): parameters are spread, and a statement's `reader` flag is
// whether it returns columns.

import { closeSync, openSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
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

export function nodeSqliteDialect(db: DatabaseSync): SqliteDialect {
  const database: SqliteDatabase = {
    close: () => db.close(),
    prepare(sql: string) {
      const stmt = db.prepare(sql);
      return {
        reader: stmt.columns().length > 0,
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
