// guard-agent entry point: argv → command → exit code. The only place that sets the exit
// code, through EXIT_CODES. No signal handlers: SIGINT/SIGTERM end the process with the
// default disposition (exit 130/143), as spec 1.7 and 7.1 require.

import { Command, CommanderError, Option } from 'commander';
import { DEFAULT_CONFIG_PATH, loadConfig } from './config.ts';
import type { CommandContext } from './context.ts';
import { AgentError, EXIT_CODES } from './errors.ts';
import { createProgress } from './progress.ts';
import { AGENT_VERSION } from './version.ts';

export function buildProgram(ctx: (configPath: string, explicit: boolean) => CommandContext): Command {
  const program = new Command('guard-agent')
    .description('Guard host agent: enrolment and diagnostic support bundles for Guard support.')
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

  program
    .command('enroll')
    .description(
      'Enrol this host with the Guard service: exchange an enrolment token for the agent API key ' +
        'and store it in <state_dir>/enrollment.json (mode 0600). Prints "enrolled agent_id=<id> tenant_id=<id>"; ' +
        'the API key is never printed. Plain http:// is accepted only to a loopback address. ' +
        'Proxies: the config keys proxy.https, proxy.http, proxy.no_proxy, else HTTPS_PROXY, HTTP_PROXY, NO_PROXY.',
    )
    .requiredOption('--url <base_url>', 'service base URL, e.g. https://guard.example.com')
    .option('--token-file <file>', 'file holding the enrolment token')
    .option('--token <->', 'read the enrolment token from standard input (only "-" is accepted)')
    .exitOverride()
    .action((flags: { url: string; tokenFile?: string; token?: string }) =>
      import('./commands/enroll.ts').then(({ runEnroll }) => runEnroll(contextOf(), flags, process.stdin)),
    );

  const bundle = program
    .command('support-bundle')
    .description('build and send diagnostic bundles for Guard support')
    .exitOverride();
  bundle
    .command('collect')
    .description(
      'Collect a redacted diagnostic bundle (.tar.zst): agent.log and its rotated segments ' +
        '(newest first, within 180 MiB), system.json, config.redacted.json and BUNDLE-MANIFEST.json. ' +
        'Prints the bundle path on stdout, and sha256=<hex> and size=<bytes> on stderr. ' +
        'Only credential values in logs are masked: review a bundle before sharing it outside your organisation.',
    )
    .option('--out <path>', 'bundle path (default: <state_dir>/support/<unix_seconds>.tar.zst); never overwritten')
    .exitOverride()
    .action((flags: { out?: string }) =>
      // Each command loads only what it needs (upload's HTTP client is large).
      import('./commands/support-bundle-collect.ts').then(({ runCollect }) => runCollect(contextOf(), flags)),
    );
  bundle
    .command('upload')
    .description(
      'Upload a bundle made by collect to Guard support (the agent must be enrolled). Before any network ' +
        'call every member is checked against the manifest and the file SHA-256 is computed. Then: presign, ' +
        'PUT to the presigned URL (no Authorization header), register. Prints bundle_id=, object_key= and ' +
        'uploaded_at= lines on stdout. Retries on connection errors, 429 and 5xx. The local file is never ' +
        'modified or deleted. Proxies: the config keys proxy.https, proxy.http, proxy.no_proxy, else ' +
        'HTTPS_PROXY, HTTP_PROXY, NO_PROXY.',
    )
    .argument('<bundle-file>', 'path to a .tar.zst bundle made by support-bundle collect')
    .exitOverride()
    .action((bundleFile: string) =>
      import('./commands/support-bundle-upload.ts').then(({ runUpload }) => runUpload(contextOf(), bundleFile)),
    );
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const context = (configPath: string, explicit: boolean): CommandContext => ({
    stdout: process.stdout,
    stderr: process.stderr,
    cwd: process.cwd(),
    env: process.env,
    version: AGENT_VERSION,
    now: () => new Date(),
    loadConfig: (options) => loadConfig(configPath, explicit, options),
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
  process.exitCode = await main(process.argv.slice(2));
}
