// `guard-server migrate`, and how serve and setup meet a database that lacks migrations, with
// the real bin/guard-server on this run's engine (SQLite in the data dir, or a fresh
// PostgreSQL database of the run's cluster).

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { MIGRATION_NAMES } from '../src/db/index.ts';
import { freePort, makeTempDir, SERVER_BIN, spawnServer, stopSpawned } from './harness.ts';
import { databaseArgs, dropTestDatabase, ON_POSTGRES } from './test-database.ts';

const execFileP = promisify(execFile);

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileP(SERVER_BIN, args, { timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('guard-server migrate', () => {
  it('applies every migration to a fresh database and says which; a second run finds nothing to do', async () => {
    const dataDir = await makeTempDir('migrate');
    try {
      const db = await databaseArgs(dataDir, { migrate: false });
      const first = await cli(['migrate', '--data-dir', dataDir, ...db]);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, `Applied ${MIGRATION_NAMES.length} migration(s): ${MIGRATION_NAMES.join(', ')}.\n`);
      const second = await cli(['migrate', '--data-dir', dataDir, ...db]);
      assert.equal(second.code, 0, second.stderr);
      assert.equal(second.stdout, `The database is up to date (${MIGRATION_NAMES.length} migrations).\n`);
      const setup = await cli(['setup', '--data-dir', dataDir, ...db, '--json']);
      assert.equal(setup.code, 0, setup.stderr);
      const json = JSON.parse(setup.stdout);
      for (const key of ['tenant_id', 'admin_email', 'admin_password', 'admin_token', 'enroll_token'])
        assert.equal(typeof json[key], 'string', `setup --json lacks ${key}`);
    } finally {
      await dropTestDatabase(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('migrate --help says when to run it', async () => {
    const r = await cli(['migrate', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: guard-server migrate /);
    assert.match(r.stdout, /--migrate/);
  });

  if (ON_POSTGRES) {
    it('serve on PostgreSQL refuses a database with pending migrations (exit 1, naming migrate), unless --migrate', async () => {
      const dataDir = await makeTempDir('pending');
      try {
        const db = await databaseArgs(dataDir, { migrate: false });
        const refused = await cli(['--data-dir', dataDir, ...db, '--listen', '127.0.0.1:0', '--metrics-listen', '']);
        assert.equal(refused.code, 1, refused.stderr);
        assert.match(
          refused.stderr,
          new RegExp(`needs ${MIGRATION_NAMES.length} migration\\(s\\).*guard-server migrate.*--migrate`),
        );
        const server = await spawnServer(dataDir, await freePort()); // the harness adds --migrate
        assert.deepEqual(await stopSpawned(server), { code: 0, signal: null });
        // With --database the data dir holds no database: the master key (and objects).
        assert.deepEqual((await readdir(dataDir)).sort(), ['master.key', 'objects']);
      } finally {
        await dropTestDatabase(dataDir);
        await rm(dataDir, { recursive: true, force: true });
      }
    });

    it('migrate from several hosts at once applies each migration once', async () => {
      const dataDir = await makeTempDir('race');
      try {
        const db = await databaseArgs(dataDir, { migrate: false });
        const runs = await Promise.all([1, 2, 3].map(() => cli(['migrate', '--data-dir', dataDir, ...db])));
        for (const r of runs) assert.equal(r.code, 0, r.stderr);
        const applied = runs.filter((r) => r.stdout.startsWith('Applied'));
        assert.equal(applied.length, 1, runs.map((r) => r.stdout).join(''));
      } finally {
        await dropTestDatabase(dataDir);
        await rm(dataDir, { recursive: true, force: true });
      }
    });

    it('a --database that is not postgres:// is refused as a usage error (exit 2)', async () => {
      const r = await cli(['migrate', '--database', 'mysql://x@y/z']);
      assert.equal(r.code, 2);
      assert.match(
        r.stderr,
        /--database \(GUARD_SERVER_DATABASE, database\) must be a postgres:\/\/USER@HOST:PORT\/DB URL/,
      );
    });
  }
});
