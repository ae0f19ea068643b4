// `guard-agent support-bundle upload BUNDLE`: parses its one argument and calls uploadBundle.
// stdout on success is exactly three lines (DESIGN §3 contract — upload output):
// bundle_id=<id>, object_key=<key>, uploaded_at=<RFC 3339>, verbatim from the register answer.

import { resolve } from 'node:path';
import { uploadBundle } from '../bundle/upload.ts';
import type { CommandContext } from '../context.ts';
import { createAgents, destroyAgents, realSleep, userAgent } from '../http-client.ts';
import { proxySettings } from '../proxy-settings.ts';

export async function runUpload(ctx: CommandContext, bundle: string): Promise<void> {
  const config = await ctx.loadConfig();
  const agents = createAgents(proxySettings(ctx.env));
  try {
    const result = await uploadBundle({
      path: resolve(ctx.cwd, bundle),
      stateDir: config.stateDir,
      progress: ctx.progress,
      http: {
        agents,
        userAgent: userAgent(ctx.version),
        now: ctx.now,
        sleep: realSleep,
        random: Math.random,
        notice: (line) => ctx.stderr.write(`guard-agent: ${line}\n`),
      },
    });
    ctx.stdout.write(
      `bundle_id=${result.bundle_id}\nobject_key=${result.object_key}\nuploaded_at=${result.uploaded_at}\n`,
    );
  } finally {
    destroyAgents(agents);
  }
}
