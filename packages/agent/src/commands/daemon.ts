// `guard-agent [--config FILE] daemon`: runs in the foreground (systemd's Type=simple; the unit
// is packages/agent/systemd/guard-agent.service) until SIGTERM or SIGINT, then stops within
// seconds and exits 0. It is the one command that installs signal handlers: the stop signal is
// handed to runDaemon as an AbortSignal; a second signal ends the process at once. The
// support-bundle commands stay one-shot, with none (spec 1.7).

import os from 'node:os';
import type { Command } from 'commander';
import type { CommandContext } from '../context.ts';

export function addDaemonCommand(program: Command, contextOf: () => CommandContext): void {
  program
    .command('daemon')
    .description(
      'Run in the foreground (for systemd): heartbeat to the Guard service with the enrolled agent key and ' +
        'long-poll it for commands; a support-bundle request from the console is collected and uploaded as ' +
        '"support-bundle collect" and "upload" do (trigger console_push), one at a time, each step reported. ' +
        'Logs go to stderr. SIGTERM stops it within seconds. The agent must be enrolled. ' +
        'Proxies: the config keys proxy.https, proxy.http, proxy.no_proxy, else HTTPS_PROXY, HTTP_PROXY, NO_PROXY.',
    )
    .exitOverride()
    .action(() => runDaemonCommand(contextOf()));
}

export async function runDaemonCommand(ctx: CommandContext): Promise<void> {
  const [daemon, { readEnrollment }, { withCommandHttp }] = await Promise.all([
    import('../daemon/index.ts'),
    import('../enrollment/index.ts'),
    import('./command-http.ts'),
  ]);
  const config = await ctx.loadConfig();
  const enrollment = await readEnrollment(config.stateDir);
  const log = daemon.createLog(ctx.stderr, ctx.now);
  const stop = new AbortController();
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
  try {
    await withCommandHttp(ctx, { config }, (http) =>
      daemon.runDaemon({
        stateDir: config.stateDir,
        service: daemon.serviceClient(http, enrollment),
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
        }),
        log,
        now: ctx.now,
        random: Math.random,
        stop: stop.signal,
      }),
    );
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
