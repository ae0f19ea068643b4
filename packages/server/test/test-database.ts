// Which database engine this test run uses, and a database of that engine per test server.
// `npm test` runs the whole server suite twice: once on SQLite (GUARD_TEST_DATABASE unset)
// and once on PostgreSQL (GUARD_TEST_DATABASE=postgres, set by scripts/test-postgres.ts with
// GUARD_TEST_POSTGRES_URL naming the throw-away cluster it started). Run by hand with only
// GUARD_TEST_DATABASE=postgres, each test process starts a cluster of its own (~1.3 s).
// Only this file (and the script) read these variables.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import type { DatabaseConfig } from '../src/config.ts';
import { type Db, type Engine, openDatabase } from '../src/db/index.ts';
import { clusterAt, type PgDatabases, startPgCluster, stopPgClusterSync } from './postgres-cluster.ts';

export const TEST_ENGINE: Engine = process.env.GUARD_TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';
export const ON_POSTGRES = TEST_ENGINE === 'postgres';

let cluster: Promise<PgDatabases> | undefined;

/** The cluster of this run: the shared one, or one this process starts (stopped at exit). */
export function testCluster(): Promise<PgDatabases> {
  cluster ??= (async () => {
    const shared = process.env.GUARD_TEST_POSTGRES_URL;
    if (shared) return clusterAt(shared);
    const own = await startPgCluster({ label: `proc${process.pid}` });
    process.once('exit', () => stopPgClusterSync(own.dir));
    // The test runner ends a file that runs too long with SIGTERM: take the cluster along.
    for (const signal of ['SIGTERM', 'SIGINT'] as const)
      process.once(signal, () => {
        stopPgClusterSync(own.dir);
        process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
      });
    return own;
  })();
  return cluster;
}

/** The database URL of each data dir a test made, so a restart on the dir finds its data again. */
const byDataDir = new Map<string, string>();

/**
 * The command-line flags that put a server on this run's engine for `dataDir`: none on
 * SQLite (the data dir holds it); on PostgreSQL `--database` with a database made for this
 * data dir on first use, and `--migrate`.
 */
export async function databaseFlags(dataDir: string): Promise<Record<string, string | boolean>> {
  if (!ON_POSTGRES) return {};
  let url = byDataDir.get(dataDir);
  if (!url) {
    url = await (await testCluster()).createDatabase('guard_t');
    byDataDir.set(dataDir, url);
  }
  return { database: url, migrate: true };
}

/** The same as arguments for bin/guard-server (`setup` takes --database, and ignores --migrate). */
export async function databaseArgs(dataDir: string, options: { migrate?: boolean } = {}): Promise<string[]> {
  const flags = await databaseFlags(dataDir);
  if (!flags.database) return [];
  return ['--database', String(flags.database), ...(options.migrate === false ? [] : ['--migrate'])];
}

/** Drops the data dir's database, if it has one (the data dir itself is the caller's). */
export async function dropTestDatabase(dataDir: string): Promise<void> {
  const url = byDataDir.get(dataDir);
  if (!url) return;
  byDataDir.delete(dataDir);
  await (await testCluster()).dropDatabase(url);
}

export interface TestDatabase {
  engine: Engine;
  db: Db;
  dataDir: string;
  database: DatabaseConfig;
  /** Another connection pool to the same database: a second replica's view. */
  openAnother(): Promise<Db>;
  close(): Promise<void>;
}

/** A migrated, empty database of this run's engine, for tests below the HTTP layer. */
export async function openTestDatabase(label = 'db'): Promise<TestDatabase> {
  const dataDir = await mkdtemp(join(os.tmpdir(), `guard-${label}-`));
  let database: DatabaseConfig = { engine: 'sqlite' };
  if (ON_POSTGRES) {
    const url = String((await databaseFlags(dataDir)).database);
    database = { engine: 'postgres', url, password: undefined, display: url, poolSize: 10 };
  }
  const db = await openDatabase({ dataDir, database });
  const others: Db[] = [];
  return {
    engine: TEST_ENGINE,
    db,
    dataDir,
    database,
    async openAnother() {
      if (!ON_POSTGRES) throw new Error('one process owns an SQLite database');
      const other = await openDatabase({ dataDir, database });
      others.push(other);
      return other;
    },
    async close() {
      for (const o of others) await o.destroy();
      await db.destroy();
      await dropTestDatabase(dataDir);
      // The WAL checkpointer's thread closes its connection after destroy() returns (its stop is
      // a message), and may still drop its -wal/-shm files meanwhile: retry a directory not yet empty.
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });
    },
  };
}

/** A short random name for test rows. */
export const randomName = (prefix: string) => `${prefix}_${randomBytes(6).toString('hex')}`;
