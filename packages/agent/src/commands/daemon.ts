// `guard-agent [--config FILE] daemon`: runs in the foreground (systemd's Type=simple; the unit
// is packages/agent/systemd/guard-agent.service) until SIGTERM or SIGINT, then stops within
// seconds and exits 0. It is the one command that installs signal handlers: the stop signal is
// handed to runDaemon as an AbortSignal; a second signal ends the process at once. The
// support-bundle commands stay one-shot, with none (spec 1.7).

import os from 'node:os';
import type { Command } from 'commander';
import { DEFAULT_DETECT } from '../config.ts';
import type { CommandContext } from '../context.ts';

export function addDaemonCommand(program: Command, contextOf: () => CommandContext): void {
  program
    .command('daemon')
    .description(
      "Run in the foreground (for systemd): detect security events on this host (the config's detect: keys — " +
        'auth log lines of sudo, sshd and useradd, changes to watched files, executions from /tmp, /var/tmp ' +
        'and /dev/shm through eBPF) and send them as signals, kept in a spool under state_dir while the ' +
        'service is away; heartbeat to the Guard service with the enrolled agent key and ' +
        'long-poll it for commands; a support-bundle request from the console is collected and uploaded as ' +
        '"support-bundle collect" and "upload" do (trigger console_push), one at a time, each step reported. ' +
        'Logs go to stderr and to log_path. SIGTERM stops it within seconds. The agent must be enrolled. ' +
        'Proxies: the config keys proxy.https, proxy.http, proxy.no_proxy, else HTTPS_PROXY, HTTP_PROXY, NO_PROXY.',
    )
    .exitOverride()
    .action(() => runDaemonCommand(contextOf()));
}

export async function runDaemonCommand(ctx: CommandContext): Promise<void> {
  const [daemon, detect, { readEnrollment }, { withCommandHttp }] = await Promise.all([
    import('../daemon/index.ts'),
    import('../detect/index.ts'),
    import('../enrollment/index.ts'),
    import('./command-http.ts'),
  ]);
  const config = await ctx.loadConfig();
  const enrollment = await readEnrollment(config.stateDir);
  const logFile = new daemon.LogFile(config.logPath, (m) => ctx.stderr.write(m));
  const log = daemon.createLog(ctx.stderr, ctx.now, logFile);
  const stop = new AbortController();
  /** Detection ends with the daemon, whether stopped by a signal or by a refused key. */
  const detectionStop = new AbortController();
  stop.signal.addEventListener('abort', () => detectionStop.abort(), { once: true });
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) {
      // A second signal: stop now, with the default disposition (exit 130/143).
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.kill(process.pid, signal);
      return;
    }
    log.info('stopping', { signal });
    stop.abort(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  let detection: InstanceType<typeof detect.Detection> | undefined;
  try {
    await withCommandHttp(ctx, { config }, async (http) => {
      const service = daemon.serviceClient(http, enrollment, (policy) => detection?.applyPolicy(policy));
      detection = new detect.Detection({
        stateDir: config.stateDir,
        config: config.detect ?? DEFAULT_DETECT,
        log,
        now: ctx.now,
        send: (body, key, signal) => service.postSignal(body, key, signal),
        sendBatch: (items, signal) => service.postSignals(items, signal),
        retryDelay: (failures) => daemon.reconnectDelay(failures, Math.random),
        signal: detectionStop.signal,
      });
      await detection.start();
      try {
        await daemon.runDaemon({
          stateDir: config.stateDir,
          service,
          startJob: (input, onEvent) =>
            daemon.startJob(
              { ...input, configPath: ctx.configPath, configExplicit: ctx.configExplicit, version: ctx.version },
              ctx.env as NodeJS.ProcessEnv,
              onEvent,
            ),
          heartbeat: () => ({
            agent_version: ctx.version,
            hostname: os.hostname(),
            uptime_seconds: Math.floor(os.uptime()),
            agent_uptime_seconds: Math.floor(process.uptime()),
            detectors: detection?.status().map(({ name, state, reason, last_event_at }) => ({
              name,
              state: state === 'starting' ? 'failed' : state,
              ...(reason ? { reason: reason.slice(0, 500) } : state === 'starting' ? { reason: 'starting' } : {}),
              ...(last_event_at ? { last_event_at } : {}),
            })),
            spool_depth: detection?.spoolDepth,
          }),
          log,
          now: ctx.now,
          random: Math.random,
          stop: stop.signal,
        });
      } finally {
        detectionStop.abort();
        await detection.stopped();
      }
    });
  } finally {
    logFile.close();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
