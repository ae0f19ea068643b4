// `guard-agent enroll --url BASE_URL (--token-file FILE | --token -)`: parses its options,
// reads the token, and calls enrollAgent. Prints one confirmation line on stdout; the API
// key is written to <state_dir>/enrollment.json only, never printed.

import os from 'node:os';
import { resolve } from 'node:path';
import type { CommandContext } from '../context.ts';
import { enrollAgent } from '../enrollment/enroll.ts';
import { checkStateDirWritable, previousEnrollment } from '../enrollment/store.ts';
import { readToken, type TokenSource } from '../enrollment/token.ts';
import { AgentError } from '../errors.ts';
import { normaliseBaseUrl } from '../http-client.ts';
import { withCommandHttp } from './http.ts';

export interface EnrollFlags {
  url: string;
  tokenFile?: string;
  token?: string;
}

export async function runEnroll(ctx: CommandContext, flags: EnrollFlags, stdin: NodeJS.ReadableStream): Promise<void> {
  let source: TokenSource;
  if (flags.tokenFile !== undefined && flags.token !== undefined)
    throw new AgentError('usage', 'give either --token-file FILE or --token -, not both');
  if (flags.tokenFile !== undefined) source = { kind: 'file', path: resolve(ctx.cwd, flags.tokenFile) };
  else if (flags.token === '-') source = { kind: 'stdin' };
  else if (flags.token !== undefined)
    throw new AgentError(
      'usage',
      '--token only takes "-" (read the token from standard input): a token on the command line would be visible to other users in the process list',
    );
  else
    throw new AgentError(
      'usage',
      'the enrolment token is required: --token-file FILE, or --token - to read it from standard input',
    );

  normaliseBaseUrl(flags.url, '--url'); // refuse a bad URL before reading anything
  const config = await ctx.loadConfig();
  const token = await readToken(source, stdin);
  // Before the token is sent: the service spends a use of it on every accepted enrolment.
  await checkStateDirWritable(config.stateDir);
  const before = await previousEnrollment(config.stateDir);
  const { enrollment } = await withCommandHttp(ctx, { config }, (http) =>
    enrollAgent({
      url: flags.url,
      token,
      hostname: os.hostname(),
      environment: config.environment,
      agentVersion: ctx.version,
      stateDir: config.stateDir,
      http,
    }),
  );
  if (before && before.agent_id !== enrollment.agent_id)
    ctx.stderr.write(`guard-agent: replaced the previous enrolment (agent_id=${before.agent_id})\n`);
  ctx.stdout.write(`enrolled agent_id=${enrollment.agent_id} tenant_id=${enrollment.tenant_id}\n`);
}
