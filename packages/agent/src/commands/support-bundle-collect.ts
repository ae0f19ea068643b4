// `guard-agent support-bundle collect [--out PATH]`: its one flag, and runCollect, which builds
// the bundle through collectBundle and prints per the contract: stdout = the absolute bundle
// path; stderr = sha256=<hex> and size=<bytes>. The bundle modules load when it runs.

import type { Command } from 'commander';
import type { CommandContext } from '../context.ts';

export interface CollectFlags {
  out?: string;
}

export function addCollectCommand(group: Command, contextOf: () => CommandContext): void {
  group
    .command('collect')
    .description(
      'Collect a redacted diagnostic bundle (.tar.zst): agent.log and its rotated segments ' +
        '(newest first, within 180 MiB), system.json, config.redacted.json and BUNDLE-MANIFEST.json. ' +
        'Prints the bundle path on stdout, and sha256=<hex> and size=<bytes> on stderr. ' +
        'Only credential values in logs are masked: review a bundle before sharing it outside your organisation.',
    )
    .option('--out <path>', 'bundle path (default: <state_dir>/support/<unix_seconds>.tar.zst); never overwritten')
    .exitOverride()
    .action((flags: CollectFlags) => runCollect(contextOf(), flags));
}

export async function runCollect(ctx: CommandContext, flags: CollectFlags): Promise<void> {
  const { collectBundle, HOST_SOURCES } = await import('../bundle/index.ts');
  const config = await ctx.loadConfig({ asBundleSource: true });
  const result = await collectBundle({
    config,
    out: flags.out,
    cwd: ctx.cwd,
    agentVersion: ctx.version,
    trigger: 'cli',
    now: ctx.now,
    progress: ctx.progress(),
    sources: HOST_SOURCES,
  });
  for (const e of result.manifest.collection_errors)
    ctx.stderr.write(`warning: ${e.source}: ${e.message} (recorded in the bundle)\n`);
  ctx.stdout.write(`${result.path}\n`);
  ctx.stderr.write(`sha256=${result.sha256}\nsize=${result.size}\n`);
}
