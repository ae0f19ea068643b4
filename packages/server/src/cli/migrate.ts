// `guard-server migrate`: applies the database's pending migrations, then exits (the upgrade
// step of PostgreSQL deployments; docs/guard-server.md). The database modules load only when
// it runs.

import type { Command } from 'commander';
import type { ExitName } from '../kernel/exit-codes.ts';
import { describeCommand } from './help.ts';
import { failure, type Settle } from './outcome.ts';
import { addSettingOptions, serverConfigOf } from './settings-options.ts';

export function addMigrateCommand(program: Command, settle: Settle): void {
  const command = program
    .command('migrate')
    .summary("apply the database's pending migrations and exit")
    .usage('migrate [--database URL] [--data-dir DIR] [--config FILE]')
    .description(
      `Applies the migrations this release brings that the database has not run, then exits. With
PostgreSQL (--database postgres://USER@HOST:PORT/DB) run it once per upgrade, before the new
release's replicas start: they refuse a database with pending migrations unless started with
--migrate. Replicas still on the previous release keep running meanwhile. Safe to run twice
or from several hosts at once (the migrations take a lock and run in one transaction).
Without --database it migrates the SQLite database in the data directory (serve does that by
itself at every start).`,
    );
  addSettingOptions(command, {
    dataDir: { value: 'dir', what: 'the data directory' },
    database: { value: 'url', what: 'postgres://USER@HOST:PORT/DB, password from the URL or PGPASSWORD' },
  });
  describeCommand(command, { synopsis: 'migrate [options]', docs: 'docs/guard-server.md' }).action(async () =>
    settle(await runMigrateCommand(command)),
  );
}

async function runMigrateCommand(command: Command): Promise<ExitName> {
  const config = serverConfigOf(command);
  try {
    const { openDatabase, migrate, MIGRATION_NAMES } = await import('../db/index.ts');
    const db = await openDatabase(config, { migrations: 'none' });
    try {
      const applied = await migrate(db);
      process.stdout.write(
        applied.length > 0
          ? `Applied ${applied.length} migration(s): ${applied.join(', ')}.\n`
          : `The database is up to date (${MIGRATION_NAMES.length} migrations).\n`,
      );
    } finally {
      await db.destroy();
    }
  } catch (error) {
    return failure('migrate failed', error, config);
  }
  return 'ok';
}
