// guard-server entry point: argv → command → exit code. The commands are commander commands,
// one file per command in cli/ (as guard-agent's commands/); their help is generated from
// their options, which come from config.ts's SETTINGS. This is the only place that ends the
// process or sets its exit code, always through EXIT_CODES (exit-codes.ts, docs/guard-server.md).
//   guard-server [serve] [options]          run the service (the default command)
//   guard-server setup [--json] [options]   headless bootstrap (DESIGN §6)
//   guard-server migrate [options]          apply the database's pending migrations, then exit
//   guard-server export --out FILE|-        the deployment's data as one archive
//   guard-server import --in FILE|-         an archive into an empty deployment
//   guard-server reset-mfa --email EMAIL     remove a user's second factors (the operator's recovery)
//   guard-server [command] --help | --version

import { Command, CommanderError } from 'commander';
import { addExportCommand } from './cli/export.ts';
import { describeCommand } from './cli/help.ts';
import { addImportCommand } from './cli/import.ts';
import { addMigrateCommand } from './cli/migrate.ts';
import { failure, type Outcome, type Settle, UsageError } from './cli/outcome.ts';
import { addResetMfaCommand } from './cli/reset-mfa.ts';
import { addServeCommand } from './cli/serve.ts';
import { addSetupCommand } from './cli/setup.ts';
import { ConfigError, parseServerArgs } from './config.ts';
import { EXIT_CODES } from './kernel/exit-codes.ts';
import { SERVER_VERSION } from './kernel/version.ts';

function buildProgram(settle: Settle): Command {
  const program = new Command('guard-server')
    .description('the Guard service')
    .option('-V, --version', 'print the version')
    .helpCommand(false)
    .exitOverride()
    .allowUnknownOption()
    .allowExcessArguments()
    // Mistakes are worded by main() below, never by commander.
    .configureOutput({ outputError: () => {} });
  describeCommand(program, { synopsis: '', docs: 'docs/guard-server.md' });
  addServeCommand(program, settle);
  addSetupCommand(program, settle);
  addMigrateCommand(program, settle);
  addExportCommand(program, settle);
  addImportCommand(program, settle);
  addResetMfaCommand(program, settle);
  // Every command takes every setting; what is left over is a flag of another command or a
  // stray argument, worded here.
  for (const command of program.commands) command.allowUnknownOption();
  program.hook('preAction', (_, command) => {
    const [first] = command.args;
    if (first === undefined) return;
    if (!first.startsWith('-')) throw new UsageError(`unexpected argument "${first}"`);
    const flag = first.replace(/=.*/, '');
    const owner = program.commands.find((c) => c.options.some((o) => o.long === flag));
    throw new UsageError(owner ? `${flag} applies to ${owner.name()} only` : `unknown option ${first}`);
  });
  return program;
}

async function main(argv: string[]): Promise<Outcome> {
  let outcome: Outcome = 'ok';
  const program = buildProgram((o) => {
    outcome = o;
  });
  const commands = program.commands.map((c) => c.name());
  let named: string | undefined;
  try {
    // The flags are checked in our own words first (config.ts), wherever the command stands.
    const parsed = (() => {
      try {
        return parseServerArgs(argv);
      } catch (error) {
        named = commands.find((c) => argv.includes(c));
        throw error;
      }
    })();
    const [first] = parsed.positionals;
    if (first !== undefined && !commands.includes(first))
      throw new UsageError(`unknown command "${first}" (commands: ${commands.join(', ')})`);
    named = first;
    if (parsed.values.version && !parsed.values.help) {
      process.stdout.write(`guard-server ${SERVER_VERSION}\n`);
      return 'ok';
    }
    // commander finds a command in first place only; guard-server takes it among the flags too.
    const args =
      named === undefined ? argv : [named, ...argv.slice(0, parsed.commandAt), ...argv.slice(parsed.commandAt + 1)];
    await program.parseAsync(args, { from: 'user' });
    return outcome;
  } catch (error) {
    // --help ends through here with exit code 0.
    if (error instanceof CommanderError && error.exitCode === 0) return 'ok';
    if (error instanceof ConfigError || error instanceof UsageError || error instanceof CommanderError) {
      process.stderr.write(
        `guard-server: ${error.message.replace(/^error: /, '')}\n(run guard-server ${named ? `${named} ` : ''}--help for usage)\n`,
      );
      return 'usage';
    }
    throw error;
  }
}

const outcome = await main(process.argv.slice(2)).catch((error: unknown) =>
  failure('unexpected error', error, undefined),
);
if (typeof outcome === 'object') process.exit(EXIT_CODES[await outcome.running].code);
else process.exitCode = EXIT_CODES[outcome].code;
