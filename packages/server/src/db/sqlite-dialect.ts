// Kysely over node:sqlite. Kysely's SqliteDialect expects better-sqlite3's shape; node:sqlite
// differs in two ways (DESIGN §9): parameters are spread, and a statement's `reader` flag is
// whether it returns columns. Hot paths (the delivery queue: signal ingest, claims, outcomes)
// skip Kysely's query building and run SQL text through the same statement cache (`Statements`).

import { closeSync, openSync } from 'node:fs';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { type Driver, type SqliteDatabase, SqliteDialect, SqliteDriver } from 'kysely';
import { JOURNAL_SIZE_LIMIT } from './sqlite-checkpointer.ts';

/** `checkpoints: false`: this connection never checkpoints; a checkpointer thread does (sqlite-checkpointer.ts). */
export function openSqlite(path: string, options: { checkpoints: boolean } = { checkpoints: true }): DatabaseSync {
  // Create the file owner-only before SQLite opens it: it holds credential hashes.
  closeSync(openSync(path, 'a', 0o600));
  const db = new DatabaseSync(path);
  // First: switching to WAL takes a lock, which another connection on its way out (a stopped
  // server's checkpointer closing) may hold for a moment.
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  // With a checkpointer thread, that thread cuts the WAL back when the database is quiet
  // (sqlite-checkpointer.ts): a COMMIT that did it stalled the event loop.
  db.exec(`PRAGMA journal_size_limit = ${options.checkpoints ? JOURNAL_SIZE_LIMIT : -1}`);
  if (!options.checkpoints) db.exec('PRAGMA wal_autocheckpoint = 0');
  return db;
}

/** Prepared statements by SQL text: preparing costs 20–150 µs, more than most queries run. */
const STATEMENT_CACHE_MAX = 500;

export class Statements {
  readonly db: DatabaseSync;
  private readonly cache = new Map<string, { stmt: StatementSync; reader: boolean }>();

  constructor(db: DatabaseSync) {
    this.db = db;
  }

  prepare(sql: string): { stmt: StatementSync; reader: boolean } {
    let entry = this.cache.get(sql);
    if (!entry) {
      const stmt = this.db.prepare(sql);
      entry = { stmt, reader: stmt.columns().length > 0 };
      if (this.cache.size >= STATEMENT_CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(sql, entry);
    }
    return entry;
  }

  all<T>(sql: string, ...params: SQLInputValue[]): T[] {
    return this.prepare(sql).stmt.all(...params) as T[];
  }

  get<T>(sql: string, ...params: SQLInputValue[]): T | undefined {
    return this.prepare(sql).stmt.get(...params) as T | undefined;
  }

  /** Runs a write; returns the number of rows changed. */
  run(sql: string, ...params: SQLInputValue[]): number {
    return Number(this.prepare(sql).stmt.run(...params).changes);
  }
}

/**
 * `beforeClose` runs, and is awaited, before the connection closes on `db.destroy()`: the
 * checkpointer thread's stop, so that the server's connection is the last one and no thread
 * still holds the files when destroy() resolves.
 */
export function nodeSqliteDialect(statements: Statements, beforeClose?: () => Promise<void>): SqliteDialect {
  const database: SqliteDatabase = {
    close: () => statements.db.close(),
    prepare(sql: string) {
      const { stmt, reader } = statements.prepare(sql);
      return {
        reader,
        all: (parameters: ReadonlyArray<unknown>) => stmt.all(...(parameters as SQLInputValue[])),
        run: (parameters: ReadonlyArray<unknown>) => {
          const r = stmt.run(...(parameters as SQLInputValue[]));
          return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
        },
        iterate: (parameters: ReadonlyArray<unknown>) => stmt.iterate(...(parameters as SQLInputValue[])),
      };
    },
  };
  const config = { database };
  if (!beforeClose) return new SqliteDialect(config);
  return new (class extends SqliteDialect {
    override createDriver(): Driver {
      return new (class extends SqliteDriver {
        override async destroy(): Promise<void> {
          await beforeClose();
          await super.destroy();
        }
      })(config);
    }
  })(config);
}
