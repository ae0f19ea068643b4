// One console-pushed bundle, in a process of its own that the daemon starts (job-runner.ts):
// the same collect and upload as `support-bundle collect` and `support-bundle upload`, with
// trigger console_push and the request id in the manifest. It reports over IPC what it has
// done (job-protocol.ts) and exits. Like the two commands it installs no signal handler: when
// the daemon stops it mid-way it dies at once, and collect's rule holds that no partial bundle
// is ever at the output path (bundle/output.ts). A process of its own keeps the daemon small
// between requests: the bundle code, zstd's buffers and the upload's are freed with it.

import { AgentError } from '../errors.ts';
import { SILENT_PROGRESS } from '../progress.ts';
import type { JobEvent, JobInput } from './job-protocol.ts';

type Step = Extract<JobEvent, { type: 'failed' }>['step'];

export async function runJob(
  input: JobInput,
  env: NodeJS.ProcessEnv,
  emit: (e: JobEvent) => Promise<void>,
): Promise<number> {
  let step: Step = 'collect';
  try {
    const [{ collectBundle, HOST_SOURCES }, { loadConfig }] = await Promise.all([
      import('../bundle/index.ts'),
      import('../config.ts'),
    ]);
    const config = await loadConfig(input.configPath, input.configExplicit, { asBundleSource: true });
    const bundle = await collectBundle({
      config,
      out: input.out,
      cwd: '/',
      agentVersion: input.version,
      trigger: 'console_push',
      requestId: input.requestId,
      now: () => new Date(),
      progress: SILENT_PROGRESS,
      sources: HOST_SOURCES,
    });
    await emit({
      type: 'collected',
      path: bundle.path,
      size: bundle.size,
      sha256: bundle.sha256,
      collection_errors: bundle.manifest.collection_errors.length,
    });
    await emit({ type: 'uploading' });
    // Loaded only now: collect runs without the HTTP client and the schema checker (decision 0005).
    const [{ uploadBundle, UPLOAD_PHASES }, { readEnrollment }, http] = await Promise.all([
      import('../upload/index.ts'),
      import('../enrollment/index.ts'),
      import('../http/index.ts'),
    ]);
    const uploadConfig = await loadConfig(input.configPath, input.configExplicit);
    const enrollment = await readEnrollment(uploadConfig.stateDir);
    const agents = http.createAgents(
      http.proxySettings(env, http.configProxy(uploadConfig.effective, uploadConfig.source)),
    );
    // The upload's progress labels name its steps: a failure is reported with the one it was in.
    const stepOf: [string, Step][] = [
      [UPLOAD_PHASES.check, 'collect'],
      [UPLOAD_PHASES.presign, 'presign'],
      [UPLOAD_PHASES.put, 'upload'],
      [UPLOAD_PHASES.register, 'register'],
    ];
    const progress = {
      ...SILENT_PROGRESS,
      phase(label: string) {
        step = stepOf.find(([prefix]) => label.startsWith(prefix))?.[1] ?? step;
      },
    };
    try {
      const result = await uploadBundle({
        path: bundle.path,
        enrollment,
        progress,
        http: {
          agents,
          userAgent: http.userAgent(input.version),
          now: () => new Date(),
          sleep: http.realSleep,
          random: Math.random,
          notice: (line) => void process.stderr.write(`guard-agent: ${line}\n`),
        },
      });
      await emit({ type: 'done', ...result });
    } finally {
      http.destroyAgents(agents);
    }
    return 0;
  } catch (error) {
    const code = error instanceof AgentError ? error.kind : 'unexpected';
    const message = error instanceof Error ? error.message : String(error);
    await emit({ type: 'failed', step, code, message });
    return 1;
  }
}

function emitOverIpc(event: JobEvent): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error('guard-agent daemon job: started without an IPC channel'));
    process.send(event, undefined, {}, (error) => (error ? reject(error) : resolve()));
  });
}

/**
 * The job process's main: `inputJson` is the JobInput; the daemon is at the other end of the
 * IPC channel. Run as this file (the checkout) or through main.ts's hidden entry (the single
 * executable, ../internal-entry.ts).
 */
export async function runJobProcess(inputJson: string | undefined): Promise<number> {
  if (!process.send) {
    process.stderr.write("guard-agent: this is the daemon's internal job entry, not a command (see --help)\n");
    return 1;
  }
  // The daemon gone (killed outright): end at once rather than upload for nobody. Collect's
  // publish is atomic, so this leaves no partial bundle; the next run sweeps the work dir.
  process.once('disconnect', () => process.exit(1));
  const input = JSON.parse(inputJson ?? '{}') as JobInput;
  const code = await runJob(input, process.env, emitOverIpc);
  process.removeAllListeners('disconnect');
  process.disconnect?.();
  return code;
}

if (import.meta.main) {
  // Not top-level await: the single executable bundles this module as CommonJS (packaging/agent).
  void runJobProcess(process.argv[2]).then((code) => {
    process.exitCode = code;
  });
}
