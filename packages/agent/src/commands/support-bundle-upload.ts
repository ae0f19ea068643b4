// `guard-agent support-bundle upload BUNDLE`: its one argument, and runUpload, which reads the
// enrolment and calls uploadBundle. stdout on success is exactly three lines (DESIGN §3
// contract — upload output): bundle_id=<id>, object_key=<key>, uploaded_at=<RFC 3339>, verbatim
// from the register answer. One progress display spans the whole upload; retry notices are
// printed above it. The upload, enrolment and HTTP modules load when it runs.

import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { CommandContext } from '../context.ts';

export function addUploadCommand(group: Command, contextOf: () => CommandContext): void {
  group
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
    .action((bundleFile: string) => runUpload(contextOf(), bundleFile));
}

export async function runUpload(ctx: CommandContext, bundle: string): Promise<void> {
  const [{ uploadBundle }, { readEnrollment }, { withCommandHttp }] = await Promise.all([
    import('../upload/index.ts'),
    import('../enrollment/index.ts'),
    import('./command-http.ts'),
  ]);
  const config = await ctx.loadConfig();
  const progress = ctx.progress();
  let result: Awaited<ReturnType<typeof uploadBundle>>;
  try {
    result = await withCommandHttp(ctx, { config, progress }, async (http) =>
      uploadBundle({
        path: resolve(ctx.cwd, bundle),
        enrollment: await readEnrollment(config.stateDir),
        progress,
        http,
      }),
    );
  } finally {
    progress.done();
  }
  ctx.stdout.write(
    `bundle_id=${result.bundle_id}\nobject_key=${result.object_key}\nuploaded_at=${result.uploaded_at}\n`,
  );
}
