// `guard-server setup [--json]`: headless bootstrap (DESIGN §6, contract — headless bootstrap):
// a tenant, its first admin and an enrolment token, printed once; --json prints one object for
// scripts. The database modules load only when it runs.

import { type Command, Option } from 'commander';
import type { ExitName } from '../kernel/exit-codes.ts';
import { describeCommand } from './help.ts';
import { failure, type Settle } from './outcome.ts';
import { addSettingOptions, serverConfigOf } from './settings-options.ts';

export function addSetupCommand(program: Command, settle: Settle): void {
  const command = program
    .command('setup')
    .summary('create a tenant, its first admin and an enrolment token')
    .usage('setup [--json] [--data-dir DIR | --database URL] [--config FILE]')
    .description(
      `Creates a tenant, its first admin and an enrolment token in the database (the data
directory's SQLite, or --database; created and migrated when needed) and prints them once;
the first setup of a database also creates the vendor support account. Only hashes are
stored: nothing can be shown again.`,
    )
    .addOption(new Option('--json', 'print one JSON object for scripts (tenant_id, admin_token, enroll_token, ...)'));
  addSettingOptions(command, {
    dataDir: { value: 'dir', what: 'the data directory' },
    database: { value: 'url', what: 'postgres://USER@HOST:PORT/DB instead of SQLite' },
  });
  describeCommand(command, {
    synopsis: 'setup [--json] [options]',
    notes: `The settings of serve (guard-server serve --help) are read and checked as for serve, so
one config file serves both.
`,
    docs: 'docs/guard-server.md',
  }).action(async (flags: { json?: boolean }) => settle(await runSetupCommand(command, flags.json === true)));
}

async function runSetupCommand(command: Command, json: boolean): Promise<ExitName> {
  const config = serverConfigOf(command);
  try {
    const [{ openDatabase }, { runSetup }] = await Promise.all([import('../db/index.ts'), import('../setup.ts')]);
    const db = await openDatabase(config, { migrations: 'latest' });
    try {
      const result = await runSetup(db, () => new Date());
      if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else {
        process.stdout.write(`Tenant ${result.tenant_id} created.\n`);
        for (const [k, v] of Object.entries(result)) process.stdout.write(`  ${k.padEnd(24)} ${v}\n`);
        process.stdout.write('These secrets are shown once. Keep them safe.\n');
      }
    } finally {
      await db.destroy();
    }
  } catch (error) {
    return failure('setup failed', error, config);
  }
  return 'ok';
}
