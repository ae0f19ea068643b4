// guard-agent entry point: argv → command → exit code. Each command declares its own flags
// (commands/, one file per leaf command, as GitHub's CLI does) and loads what it runs only
// when it runs. This is the only place that sets the exit code, through EXIT_CODES. No signal
// handlers here: SIGINT/SIGTERM end enroll and support-bundle with the default disposition
// (exit 130/143), as spec 1.7 and 7.1 require; only `daemon` handles them (commands/daemon.ts).

import { Command, CommanderError, Option } from 'commander';
import { addDaemonCommand } from './commands/daemon.ts';
import { addEnrollCommand } from './commands/enroll.ts';
import { addSupportBundleCommand } from './commands/support-bundle.ts';
import { DEFAULT_CONFIG_PATH, loadConfig } from './config.ts';
import type { CommandContext } from './context.ts';
import { AgentError, type ErrorKind } from './errors.ts';
import { JOB_ENTRY_ARGUMENT } from './internal-entry.ts';
import { createProgress } from './progress.ts';
import { AGENT_VERSION } from './version.ts';

/** The one table from outcomes to exit codes (spec 7.1). */
export const EXIT_CODES: Record<ErrorKind | 'ok' | 'unexpected', number> = {
  ok: 0,
  usage: 1,
  config: 1,
  output_exists: 1,
  output_dir: 1,
  redaction: 1,
  bundle: 1,
  not_enrolled: 1,
  insecure_url: 1,
  network: 1,
  server: 1,
  io: 1,
  unexpected: 1,
};

export function buildProgram(ctx: (configPath: string, explicit: boolean) => CommandContext): Command {
  const program = new Command('guard-agent')
    .description(
      'Guard host agent: enrolment, diagnostic support bundles for Guard support, and the daemon that makes them on request.',
    )
    .version(AGENT_VERSION, '-V, --version', 'print the agent version')
    .addOption(new Option('--config <file>', 'agent config file (YAML)').default(DEFAULT_CONFIG_PATH))
    .helpOption('-h, --help', 'show help')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`guard-agent: ${text.replace(/^error: /, '')}`) });

  const contextOf = (): CommandContext => {
    const configPath: string = program.opts().config;
    return ctx(configPath, program.getOptionValueSource('config') !== 'default');
  };
  addEnrollCommand(program, contextOf);
  addSupportBundleCommand(program, contextOf);
  addDaemonCommand(program, contextOf);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  // The daemon's process for one bundle request when the agent is one executable
  // (daemon/job-runner.ts): an internal entry, not a command, so commander never sees it.
  if (argv[0] === JOB_ENTRY_ARGUMENT) return (await import('./daemon/index.ts')).runJobProcess(argv[1]);
  const context = (configPath: string, explicit: boolean): CommandContext => ({
    stdin: () => process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    cwd: process.cwd(),
    env: process.env,
    version: AGENT_VERSION,
    now: () => new Date(),
    loadConfig: (options) => loadConfig(configPath, explicit, options),
    configPath,
    configExplicit: explicit,
    progress: () => createProgress(process.stderr),
  });
  try {
    await buildProgram(context).parseAsync(argv, { from: 'user' });
    return EXIT_CODES.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
    }
    if (error instanceof AgentError) {
      process.stderr.write(`guard-agent: ${error.message}\n`);
      return EXIT_CODES[error.kind];
    }
    process.stderr.write(`guard-agent: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`);
    return EXIT_CODES.unexpected;
  }
}

if (import.meta.main) {
  // Not top-level await: the single executable bundles this module as CommonJS (packaging/agent).
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
