// `guard-server export --out FILE|-`: the deployment's data as one archive (docs/deploy.md).
// The transfer modules load only when it runs.

import { type Command, Option } from 'commander';
import type { ExitName } from '../kernel/exit-codes.ts';
import { describeCommand } from './help.ts';
import { failure, type Settle, UsageError } from './outcome.ts';
import { addSettingOptions, serverConfigOf } from './settings-options.ts';

export function addExportCommand(program: Command, settle: Settle): void {
  const command = program
    .command('export')
    .summary("write the deployment's data as one archive")
    .usage('export --out FILE [--data-dir DIR] [--config FILE]')
    .description(
      `Writes the deployment's data as one tar archive: every row of the database, the object of
every registered bundle and the master key (webhook endpoint secrets stay decryptable).
Stop the serving guard-server first: export takes the data directory's lock, so what it
writes is one consistent state. --out - writes to standard output. The archive holds every
secret of the deployment: it is created 0600; keep it like the data directory.
guard-server import reads it (docs/deploy.md: moving to PostgreSQL and S3).`,
    )
    .addOption(new Option('--out <file>', 'the archive to write (- for standard output)'));
  addSettingOptions(command, { dataDir: { value: 'dir', what: 'the data directory' } });
  describeCommand(command, { synopsis: 'export --out FILE [options]', docs: 'docs/deploy.md' }).action(
    async (flags: { out?: string }) => settle(await runExportCommand(command, flags.out)),
  );
}

async function runExportCommand(command: Command, out: string | undefined): Promise<ExitName> {
  if (out === undefined) throw new UsageError('export needs --out FILE (or --out - for standard output)');
  const config = serverConfigOf(command);
  try {
    const { runExport, describeSummary } = await import('../data-transfer.ts');
    process.stderr.write(describeSummary('exported', await runExport(config, out)));
  } catch (error) {
    return failure('export failed', error, config);
  }
  return 'ok';
}
