// Starts job.ts for one bundle request in a child process (the daemon's Node, with its flags)
// and relays its events; kill() ends it: SIGTERM, which the job does not handle (it dies at
// once), then SIGKILL if it is somehow still there after KILL_GRACE_MS.

import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isJobEvent, type JobEvent, type JobInput } from './job-protocol.ts';

const JOB_FILE = fileURLToPath(new URL('./job.ts', import.meta.url));
export const KILL_GRACE_MS = 2000;

export interface JobHandle {
  pid: number | undefined;
  /** Resolves once the process has exited and every event it sent was delivered. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

export function startJob(input: JobInput, env: NodeJS.ProcessEnv, onEvent: (e: JobEvent) => void): JobHandle {
  const child: ChildProcess = fork(JOB_FILE, [JSON.stringify(input)], {
    execArgv: process.execArgv,
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  child.on('message', (message) => {
    if (isJobEvent(message)) onEvent(message);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    // 'close': the process is gone and its stdio and IPC channel are drained.
    child.once('close', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  let killing = false;
  return {
    pid: child.pid,
    exited,
    kill() {
      if (killing || child.exitCode !== null || child.signalCode !== null) return;
      killing = true;
      child.kill('SIGTERM');
      const hard = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
      hard.unref();
      void exited.then(() => clearTimeout(hard));
    },
  };
}
