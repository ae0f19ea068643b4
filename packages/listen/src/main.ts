// `guard`: argv → command → exit code (src/errors.ts holds the table). Commands live in
// commands/, one file each; this is the only place that maps an outcome to an exit code, and
// bin.ts the only one that ends the process.

import { Command, CommanderError } from 'commander';
import { addListenCommand } from './commands/listen.ts';
import { addTriggerCommand } from './commands/trigger.ts';
import { EXIT_CODES, ListenError } from './errors.ts';
import { LISTEN_VERSION } from './version.ts';

export function buildProgram(): Command {
  const program = new Command('guard')
    .description(
      "Guard on a developer's machine: receive a tenant's webhook events from a Guard server, forwarded to a local " +
        'URL and signed as real deliveries (guard listen), and make test events (guard trigger). Self-hosted: the ' +
        'stream goes from this machine to your Guard server, with no relay in between.',
    )
    .version(LISTEN_VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`guard: ${text.replace(/^error: /, '')}`) });
  addListenCommand(program);
  addTriggerCommand(program);
  for (const command of program.commands) command.exitOverride();
  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return EXIT_CODES.ok;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
    if (error instanceof ListenError) {
      process.stderr.write(`guard: ${error.message}\n`);
      return EXIT_CODES[error.kind];
    }
    process.stderr.write(`guard: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`);
    return EXIT_CODES.unexpected;
  }
}
