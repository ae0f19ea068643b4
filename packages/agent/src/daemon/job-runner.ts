// Starts the process of one bundle request (job.ts) and relays its events; kill() ends it:
// SIGTERM, which the job does not handle (it dies at once), then SIGKILL if it is somehow still
// there after KILL_GRACE_MS.
//
// The child runs in every form the agent ships (jobCommand): from the checkout, job.ts on the
// daemon's Node with the daemon's flags; as the single executable (the release file, and
// /usr/bin/guard-agent of the .deb), the same executable with the hidden first argument
// JOB_ENTRY_ARGUMENT, which main() hands to job.ts (the executable carries its own V8 flags,
// and there is no job.ts beside it to fork); and the esbuild bundle run by a plain node, that
// bundle with the same argument. The input travels on the command line, events over an IPC
// channel (fd 3, as fork sets it up) in every form.

import { type ChildProcess, spawn } from 'node:child_process';
import { isSea } from 'node:sea';
import { fileURLToPath } from 'node:url';
import { DAEMON_V8_FLAGS } from '../compilers.ts';
import { JOB_ENTRY_ARGUMENT } from '../internal-entry.ts';
import { isJobEvent, type JobEvent, type JobInput } from './job-protocol.ts';

export const KILL_GRACE_MS = 2000;

export interface JobHandle {
  pid: number | undefined;
  /** Resolves once the process has exited and every event it sent was delivered. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

/** The program and arguments that run job.ts with `input`, in the form this daemon runs in. */
export function jobCommand(input: JobInput): { command: string; args: string[] } {
  const json = JSON.stringify(input);
  // The single executable: its argv[1] is itself, and its flags are in the blob (execArgv).
  if (isSea()) return { command: process.execPath, args: [JOB_ENTRY_ARGUMENT, json] };
  // import.meta.url is a file: URL in the checkout; a CommonJS bundle has none (esbuild
  // leaves import.meta empty), and its job code is inside the bundle, process.argv[1].
  // The job collects and uploads: it runs with the optimizing compilers the daemon goes
  // without (compilers.ts), and the launcher's other flags.
  const flags = process.execArgv.filter((flag) => !DAEMON_V8_FLAGS.includes(flag));
  const url: string | undefined = import.meta.url;
  if (url?.startsWith('file:'))
    return { command: process.execPath, args: [...flags, fileURLToPath(new URL('./job.ts', url)), json] };
  return { command: process.execPath, args: [...flags, process.argv[1], JOB_ENTRY_ARGUMENT, json] };
}

export function startJob(input: JobInput, env: NodeJS.ProcessEnv, onEvent: (e: JobEvent) => void): JobHandle {
  const { command, args } = jobCommand(input);
  const child: ChildProcess = spawn(command, args, {
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
