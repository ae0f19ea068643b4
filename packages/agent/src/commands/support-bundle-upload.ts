// `guard-agent support-bundle upload BUNDLE`: parses its one argument and calls uploadBundle.
// stdout on success is exactly three lines (DESIGN §3 contract — upload output):
// bundle_id=<id>, object_key=<key>, uploaded_at=<RFC 3339>, verbatim from the register answer.
// One progress display spans the whole upload; retry notices are printed above it.

import { resolve } from 'node:path';
import { uploadBundle } from '../bundle/upload.ts';
import type { CommandContext } from '../context.ts';
import { withCommandHttp } from './http.ts';

export async function runUpload(ctx: CommandContext, bundle: string): Promise<void> {
  const config = await ctx.loadConfig();
  const progress = ctx.progress();
  let result: Awaited<ReturnType<typeof uploadBundle>>;
  try {
    result = await withCommandHttp(ctx, { config, progress }, (http) =>
      uploadBundle({ path: resolve(ctx.cwd, bundle), stateDir: config.stateDir, progress, http }),
    );
  } finally {
    progress.done();
  }
  ctx.stdout.write(
    `bundle_id=${result.bundle_id}\nobject_key=${result.object_key}\nuploaded_at=${result.uploaded_at}\n`,
  );
}
