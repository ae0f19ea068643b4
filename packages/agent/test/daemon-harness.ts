// `guard-agent daemon` in a child process, and agent homes enrolled with a server, for the
// daemon's end-to-end tests here and the console's (packages/console/test/console-push.test.ts).

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { BIN, childEnv, type Home, makeHome, slogLine, type TempDirs } from './harness.ts';
import { enrollArgs, NO_PROXY_ENV, runAgent, waitFor } from './upload-harness.ts';

export interface RunningDaemon {
  child: ChildProcess;
  pid: number;
  /** stderr so far (the daemon's log). */
  log(): string;
  waitForLog(pattern: RegExp, what: string, timeoutMs?: number): Promise<void>;
  /** Sends `signal` and waits for the exit; ms from the signal to the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startDaemon(home: Home, env: Record<string, string> = {}): RunningDaemon {
  const child = spawn('sh', ['-c', 'umask 022; exec "$0" "$@"', BIN, '--config', home.configPath, 'daemon'], {
    cwd: os.tmpdir(),
    env: childEnv({ ...NO_PROXY_ENV, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString('utf8');
  });
  child.stdout?.on('data', (d: Buffer) => {
    err += d.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('close', (code, signal) => r({ code, signal })),
  );
  const daemon: RunningDaemon = {
    child,
    pid: child.pid as number,
    log: () => err,
    exited,
    waitForLog: (pattern, what, timeoutMs = 20_000) => waitFor(() => pattern.test(err), what, timeoutMs),
    async stop(signal = 'SIGTERM') {
      const t0 = Date.now();
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const r = await exited;
      return { ...r, ms: Date.now() - t0 };
    },
  };
  running.add(daemon);
  return daemon;
}
const running = new Set<RunningDaemon>();

/** Kills every daemon a test started and left running. */
export async function stopAllDaemons(): Promise<void> {
  for (const d of running) await d.stop('SIGKILL');
  running.clear();
}

/** Detection off: the bundle tests see no signal raised by whatever else runs on this machine. */
export const NO_DETECTION = { auth_log: false, watch: [], exec: false };

/**
 * A home whose log has errors, warnings and a restart, enrolled with the server at `url`.
 * `detect` is its config's detect: mapping (detect.test.ts sets one); by default detection is off.
 */
export async function enrolledHome(
  dirs: TempDirs,
  url: string,
  enrollToken: string,
  log?: string,
  detect: Record<string, unknown> = NO_DETECTION,
): Promise<Home & { agentId: string }> {
  const root = await dirs.make('daemon');
  const lines = [
    slogLine('INFO', 'guard-agent starting', 'version=0.0.9'),
    slogLine('ERROR', 'probe detach failed', 'err="permission denied" pid=1003'),
    slogLine('WARN', 'upload retry', 'attempt=2 client_secret=abc'),
    slogLine('ERROR', 'probe detach failed', 'err="permission denied" pid=1012'),
  ];
  const home = await makeHome(root, {
    log: log ?? `${lines.join('\n')}\n`,
    probeStatus: { state: 'attached' },
    config: { detect },
  });
  const tokenFile = join(root, 'token');
  await writeFile(tokenFile, enrollToken);
  const r = await runAgent(enrollArgs(home, url, tokenFile));
  assert.equal(r.code, 0, r.stderr);
  const enrollment = JSON.parse(await readFile(join(home.stateDir, 'enrollment.json'), 'utf8'));
  return { ...home, agentId: enrollment.agent_id };
}
