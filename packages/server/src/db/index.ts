import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely } from 'kysely';
import { migrateToLatest } from './migrations.ts';
import { nodeSqliteDialect, openSqlite } from './sqlite-dialect.ts';
import type { Database } from './tables.ts';

export type { Database } from './tables.ts';
export type Db = Kysely<Database>;

/** Opens (creating if needed) the embedded SQLite database in the data dir and migrates it. */
export async function openDatabase(dataDir: string): Promise<Db> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = new Kysely<Database>({ dialect: nodeSqliteDialect(openSqlite(join(dataDir, 'guard.db'))) });
  await migrateToLatest(db as Kysely<unknown>);
  return db;
}
