// `guard-server import --in FILE|-`: an archive of export into an empty deployment
// (docs/deploy.md). The transfer modules load only when it runs.

import { type Command, Option } from 'commander';
import type { ExitName } from '../kernel/exit-codes.ts';
import { describeCommand } from './help.ts';
import { failure, type Settle, UsageError } from './outcome.ts';
import { addSettingOptions, serverConfigOf } from './settings-options.ts';

export function addImportCommand(program: Command, settle: Settle): void {
  const command = program
    .command('import')
    .summary('read an archive into an empty deployment')
    .usage('import --in FILE [--data-dir DIR] [--object-store URL] [--config FILE]')
    .description(
      `Reads an archive of guard-server export into an empty deployment: the database of the
settings (--database, or the SQLite file of --data-dir), the object store of --object-store,
and the master key into --data-dir (which must have none, or the same one). Rows go in one
transaction; every object is checked against its size and SHA-256. --in - reads standard
input. The settings are those of serve (guard-server serve --help).`,
    )
    .addOption(new Option('--in <file>', 'the archive to read (- for standard input)'));
  addSettingOptions(command, {
    dataDir: { value: 'dir', what: 'the data directory' },
    database: { value: 'url', what: 'postgres://USER@HOST:PORT/DB instead of SQLite' },
    objectStore: { value: 'url', what: 's3://BUCKET?endpoint=…&region=…&path_style=1' },
  });
  describeCommand(command, { synopsis: 'import --in FILE [options]', docs: 'docs/deploy.md' }).action(
    async (flags: { in?: string }) => settle(await runImportCommand(command, flags.in)),
  );
}

async function runImportCommand(command: Command, path: string | undefined): Promise<ExitName> {
  if (path === undefined) throw new UsageError('import needs --in FILE (or --in - for standard input)');
  const config = serverConfigOf(command);
  try {
    const { runImport, describeSummary } = await import('../data-transfer.ts');
    process.stderr.write(describeSummary('imported', await runImport(config, path)));
  } catch (error) {
    return failure('import failed', error, config);
  }
  return 'ok';
}
