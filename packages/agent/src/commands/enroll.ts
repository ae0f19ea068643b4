// `guard-agent enroll --url BASE_URL (--token-file FILE | --token -)`: its flags, and runEnroll,
// which reads the token and calls enrollAgent. Prints one confirmation line on stdout; the API
// key is written to <state_dir>/enrollment.json only, never printed. The enrolment and HTTP
// modules load when the command runs, not when its flags are declared (--help, --version).

import os from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { CommandContext } from '../context.ts';
import type { TokenSource } from '../enrollment/index.ts';
import { AgentError } from '../errors.ts';

export interface EnrollFlags {
  url: string;
  tokenFile?: string;
  token?: string;
}

export function addEnrollCommand(program: Command, contextOf: () => CommandContext): void {
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
    .action((flags: EnrollFlags) => runEnroll(contextOf(), flags));
}

export async function runEnroll(ctx: CommandContext, flags: EnrollFlags): Promise<void> {
  const source = tokenSource(ctx, flags);
  const [enrollment, { normaliseBaseUrl }, { withCommandHttp }] = await Promise.all([
    import('../enrollment/index.ts'),
    import('../http/index.ts'),
    import('./command-http.ts'),
  ]);
  normaliseBaseUrl(flags.url, '--url'); // refuse a bad URL before reading anything
  const config = await ctx.loadConfig();
  const token = await enrollment.readToken(source, ctx.stdin());
  // Before the token is sent: the service spends a use of it on every accepted enrolment.
  await enrollment.checkStateDirWritable(config.stateDir);
  const before = await enrollment.previousEnrollment(config.stateDir);
  const { enrollment: enrolled } = await withCommandHttp(ctx, { config }, (http) =>
    enrollment.enrollAgent({
      url: flags.url,
      token,
      hostname: os.hostname(),
      environment: config.environment,
      agentVersion: ctx.version,
      stateDir: config.stateDir,
      http,
    }),
  );
  if (before && before.agent_id !== enrolled.agent_id)
    ctx.stderr.write(`guard-agent: replaced the previous enrolment (agent_id=${before.agent_id})\n`);
  ctx.stdout.write(`enrolled agent_id=${enrolled.agent_id} tenant_id=${enrolled.tenant_id}\n`);
}

function tokenSource(ctx: CommandContext, flags: EnrollFlags): TokenSource {
  if (flags.tokenFile !== undefined && flags.token !== undefined)
    throw new AgentError('usage', 'give either --token-file FILE or --token -, not both');
  if (flags.tokenFile !== undefined) return { kind: 'file', path: resolve(ctx.cwd, flags.tokenFile) };
  if (flags.token === '-') return { kind: 'stdin' };
  if (flags.token !== undefined)
    throw new AgentError(
      'usage',
      '--token only takes "-" (read the token from standard input): a token on the command line would be visible to other users in the process list',
    );
  throw new AgentError(
    'usage',
    'the enrolment token is required: --token-file FILE, or --token - to read it from standard input',
  );
}
