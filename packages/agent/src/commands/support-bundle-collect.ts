// `guard-agent support-bundle collect [--out PATH]`: parses nothing itself beyond its one
// option; builds the bundle through collectBundle and prints per the contract:
// stdout = the absolute bundle path; stderr = sha256=<hex> and size=<bytes>.

import { collectBundle } from '../bundle/collect.ts';
import { HOST_SOURCES } from '../bundle/system-info.ts';
import type { CommandContext } from '../context.ts';

export interface CollectFlags {
  out?: string;
}

export async function runCollect(ctx: CommandContext, flags: CollectFlags): Promise<void> {
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
