// `guard-agent support-bundle reveal --map FILE` (DESIGN §4, bundles, second round): standard
// input to standard output with every token of the map replaced by its original, streaming.
// The bundle modules load when it runs.

import { resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import type { CommandContext } from '../context.ts';
import { AgentError, describeSystemError } from '../errors.ts';

export function addRevealCommand(group: Command, contextOf: () => CommandContext): void {
  group
    .command('reveal')
    .description(
      'Copy standard input to standard output with every token of an obfuscation map (host-1, ip-1, ' +
        'user-1, email-1, …) replaced by its original: for reading support’s notes or excerpts of an ' +
        'obfuscated bundle. Streams; needs no config and no enrolment.',
    )
    .requiredOption('--map <file>', 'the <bundle>.map.json that collect --obfuscate wrote beside the bundle')
    .exitOverride()
    .action((flags: { map: string }) => runReveal(contextOf(), flags));
}

export async function runReveal(ctx: CommandContext, flags: { map: string }): Promise<void> {
  const { readObfuscationMap, RevealStream } = await import('../bundle/index.ts');
  const map = await readObfuscationMap(resolve(ctx.cwd, flags.map));
  try {
    await pipeline(ctx.stdin() as Readable, new RevealStream(map), ctx.stdout as Writable, { end: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EPIPE') return; // the reader went away
    throw new AgentError('io', `reveal: ${describeSystemError(error)}`);
  }
}
