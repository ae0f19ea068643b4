// `guard-agent support-bundle collect [--out PATH] [--obfuscate] [--preview]`: its flags, and
// runCollect, which builds the bundle through collectBundle and prints per the contract:
// stdout = the absolute bundle path; stderr = sha256=<hex> and size=<bytes> (and map=<path>
// with --obfuscate). With --preview it builds nothing and prints, one line each,
// `<member>:<line>: <key or kind>` on stdout (DESIGN §4, bundles, second round). The bundle
// modules load when it runs.

import type { Command } from 'commander';
import type { CommandContext } from '../context.ts';
import { AgentError } from '../errors.ts';

export interface CollectFlags {
  out?: string;
  obfuscate?: boolean;
  preview?: boolean;
}

export function addCollectCommand(group: Command, contextOf: () => CommandContext): void {
  group
    .command('collect')
    .description(
      'Collect a redacted diagnostic bundle (.tar.zst): agent.log and its rotated segments ' +
        '(newest first, within 180 MiB), system.json, config.redacted.json and BUNDLE-MANIFEST.json. ' +
        'Prints the bundle path on stdout, and sha256=<hex> and size=<bytes> on stderr. ' +
        'Only credential values in logs are masked: review a bundle before sharing it outside your organisation ' +
        '(--preview lists what would be masked; --obfuscate also hides host names, addresses, user names and emails).',
    )
    .option('--out <path>', 'bundle path (default: <state_dir>/support/<unix_seconds>.tar.zst); never overwritten')
    .option(
      '--obfuscate',
      'replace host names, IP addresses, user names and email addresses in the logs and system.json with ' +
        'tokens (host-1, ip-1, user-1, email-1, …; one value, one token); the private map is written beside ' +
        'the bundle as <bundle>.map.json (mode 0600, never inside it); see support-bundle reveal',
    )
    .option(
      '--preview',
      'write no bundle; print <member>:<line>: <key or kind> for every value collect would mask ' +
        '(the key) or, with --obfuscate, replace (host, ip, user, email)',
    )
    .exitOverride()
    .action((flags: CollectFlags) => runCollect(contextOf(), flags));
}

export async function runCollect(ctx: CommandContext, flags: CollectFlags): Promise<void> {
  const { collectBundle, previewBundle, HOST_SOURCES } = await import('../bundle/index.ts');
  const config = await ctx.loadConfig({ asBundleSource: true });
  if (flags.preview) {
    if (flags.out !== undefined) throw new AgentError('usage', '--preview writes no bundle: --out does not apply');
    const { errors } = await previewBundle({
      config,
      agentVersion: ctx.version,
      now: ctx.now,
      sources: HOST_SOURCES,
      obfuscate: flags.obfuscate === true,
      write: (text) => writeAll(ctx.stdout, text),
    });
    for (const e of errors) ctx.stderr.write(`warning: ${e.source}: ${e.message} (collect would leave it out)\n`);
    return;
  }
  const result = await collectBundle({
    config,
    out: flags.out,
    cwd: ctx.cwd,
    agentVersion: ctx.version,
    trigger: 'cli',
    now: ctx.now,
    progress: ctx.progress(),
    sources: HOST_SOURCES,
    obfuscate: flags.obfuscate === true,
  });
  for (const e of result.manifest.collection_errors)
    ctx.stderr.write(`warning: ${e.source}: ${e.message} (recorded in the bundle)\n`);
  ctx.stdout.write(`${result.path}\n`);
  ctx.stderr.write(`sha256=${result.sha256}\nsize=${result.size}\n`);
  if (result.mapPath) ctx.stderr.write(`map=${result.mapPath}\n`);
}

/** Writes `text`, waiting for the stream to drain when its buffer is full. */
function writeAll(stream: NodeJS.WritableStream, text: string): Promise<void> {
  if (text.length === 0 || stream.write(text)) return Promise.resolve();
  return new Promise((resolve) => stream.once('drain', resolve));
}
