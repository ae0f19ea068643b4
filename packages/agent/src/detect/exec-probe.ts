// The exec probe's Node side: spawns guard-exec-probe (packages/agent/ebpf/, a small libbpf
// CO-RE program; docs/decisions/0012-exec-probe.md) and turns its JSON lines into ExecEvents.
// The helper filters in the kernel: only execs of files under `prefixes` ever reach us.

import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ExecEvent {
  pid: number;
  ppid: number;
  uid: number;
  gid: number;
  comm: string;
  /** The executed file as evidence: its path as the kernel resolved it; for a script (whose
   *  interpreter is what the kernel runs) the name it was run by, joined to the working
   *  directory when relative. */
  filename: string;
  argv: string[];
  at: Date;
}

export interface ExecProbeOptions {
  prefixes: string[]; // e.g. ['/tmp/', '/var/tmp/', '/dev/shm/']
  helperPath?: string; // else findExecProbeHelper()
  onEvent(event: ExecEvent): void;
  /** The helper ended after it was ready (why, from its stderr/exit code). Not called after stop(). */
  onExit(reason: string): void;
  now?: () => Date;
}

export interface ExecProbe {
  pid: number | undefined;
  stop(): Promise<void>;
}

const HELPER_NAME = 'guard-exec-probe';
const PACKAGED_HELPER = `/usr/lib/guard-agent/${HELPER_NAME}`;
export const READY_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 2_000;
/** A helper line is at most ~6 KiB (argv 1 KiB, names ≤ 1 KiB, each escaped at most 6×). */
export const MAX_LINE_BYTES = 64 * 1024;
const STDERR_KEEP_BYTES = 4 * 1024;
export const MAX_PREFIXES = 8;
export const MAX_PREFIX_BYTES = 63;

/** Where the helper may be, in the order findExecProbeHelper() looks. */
export function execProbeHelperCandidates(): string[] {
  const candidates = [join(dirname(process.execPath), HELPER_NAME), PACKAGED_HELPER];
  // Bundled as CommonJS (the single executable), import.meta.url is undefined.
  const url: unknown = import.meta.url;
  if (typeof url === 'string' && url.startsWith('file:')) {
    candidates.push(join(dirname(fileURLToPath(url)), '../../ebpf/build', HELPER_NAME));
  }
  return candidates;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where the helper is: beside process.execPath (the single executable ships it there),
 *  /usr/lib/guard-agent/guard-exec-probe (the .deb), or the checkout's
 *  packages/agent/ebpf/build/guard-exec-probe. */
export function findExecProbeHelper(): string | undefined {
  return execProbeHelperCandidates().find(isExecutable);
}

/** A helper line, decoded: 'ready', an exec event, or undefined for anything else (malformed,
 *  unknown type, wrong field types). Pure; never throws. */
export type ExecProbeLine = { type: 'ready' } | { type: 'exec'; event: ExecEvent };

const isUint = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isString = (v: unknown): v is string => typeof v === 'string';

export function parseExecProbeLine(line: string, at: Date): ExecProbeLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const m = value as Record<string, unknown>;
  if (m.type === 'ready') return { type: 'ready' };
  if (m.type !== 'exec') return undefined;
  const { pid, ppid, uid, gid, comm, filename, path, cwd, script, argv } = m;
  if (!isUint(pid) || !isUint(ppid) || !isUint(uid) || !isUint(gid)) return undefined;
  if (!isString(comm) || !isString(filename) || !isString(path) || !isString(cwd)) return undefined;
  if (typeof script !== 'boolean' || !Array.isArray(argv) || !argv.every(isString)) return undefined;
  return {
    type: 'exec',
    event: { pid, ppid, uid, gid, comm, filename: evidenceName(filename, path, cwd, script), argv, at },
  };
}

/** The name that put the exec under a prefix (the helper's matching rule, exec-probe.bpf.c). */
function evidenceName(filename: string, path: string, cwd: string, script: boolean): string {
  if (!script) return path !== '' ? path : filename;
  if (filename.startsWith('/') || cwd === '') return filename;
  return posix.join(cwd, filename);
}

/** Splits a byte stream into lines of at most maxBytes; longer lines are dropped (counted). */
export class LineSplitter {
  #parts: Buffer[] = [];
  #length = 0;
  #overlong = false;
  dropped = 0;
  readonly maxBytes: number;
  readonly onLine: (line: string) => void;
  constructor(maxBytes: number, onLine: (line: string) => void) {
    this.maxBytes = maxBytes;
    this.onLine = onLine;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.#append(chunk.subarray(start, nl));
      if (this.#overlong) this.dropped++;
      else this.onLine(Buffer.concat(this.#parts, this.#length).toString('utf8'));
      this.#parts = [];
      this.#length = 0;
      this.#overlong = false;
      start = nl + 1;
    }
    this.#append(chunk.subarray(start));
  }

  #append(part: Buffer): void {
    if (this.#overlong || part.length === 0) return;
    if (this.#length + part.length > this.maxBytes) {
      this.#overlong = true;
      this.#parts = [];
      this.#length = 0;
      return;
    }
    this.#parts.push(part);
    this.#length += part.length;
  }
}

function checkPrefixes(prefixes: string[]): string | undefined {
  if (prefixes.length === 0) return 'no prefix given';
  if (prefixes.length > MAX_PREFIXES) return `at most ${MAX_PREFIXES} prefixes (got ${prefixes.length})`;
  const bad = prefixes.find((p) => !p.startsWith('/') || p.includes('\0') || Buffer.byteLength(p) > MAX_PREFIX_BYTES);
  if (bad !== undefined) return `prefix ${JSON.stringify(bad)} is not an absolute path of 1-${MAX_PREFIX_BYTES} bytes`;
  return undefined;
}

/** The helper's stderr, kept bounded: its last line says why it failed. */
function lastLine(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return (lines.at(-1) ?? '').replace(/^guard-exec-probe: /, '');
}

function exitReason(code: number | null, signal: NodeJS.Signals | null, stderr: string): string {
  const said = lastLine(stderr);
  const how = signal !== null ? `killed by ${signal}` : `exit status ${code}`;
  return said !== '' ? `${said} (${how})` : `exec probe helper ended (${how})`;
}

/** Resolves once the helper printed ready; rejects with an Error whose message says why the
 *  probe cannot run (helper not found — list where it looked —, no BTF, no permission, kernel
 *  refused), within a timeout of ~10 s. */
export function startExecProbe(options: ExecProbeOptions): Promise<ExecProbe> {
  const now = options.now ?? (() => new Date());
  const prefixError = checkPrefixes(options.prefixes);
  if (prefixError !== undefined) return Promise.reject(new Error(`exec probe: ${prefixError}`));

  let helper: string | undefined;
  if (options.helperPath !== undefined) {
    helper = options.helperPath;
    if (!isExecutable(helper))
      return Promise.reject(new Error(`exec probe helper not found or not executable: ${helper}`));
  } else {
    helper = findExecProbeHelper();
    if (helper === undefined)
      return Promise.reject(
        new Error(
          `exec probe helper ${HELPER_NAME} not found (looked in ${execProbeHelperCandidates().join(', ')}); ` +
            'build it with `npm run build:probe`',
        ),
      );
  }

  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(
      helper,
      options.prefixes.flatMap((p) => ['--prefix', p]),
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let ready = false;
    let stopping = false;
    let settled = false;
    let stderr = '';
    const exited = new Promise<void>((done) => child.once('close', () => done()));

    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(message));
    };
    const timer = setTimeout(
      () =>
        fail(
          `exec probe helper ${helper} was not ready within ${READY_TIMEOUT_MS / 1000} s${stderr ? `: ${lastLine(stderr)}` : ''}`,
        ),
      READY_TIMEOUT_MS,
    );

    const lines = new LineSplitter(MAX_LINE_BYTES, (line) => {
      const message = parseExecProbeLine(line, now());
      if (message?.type === 'exec') {
        if (ready && !stopping) options.onEvent(message.event);
      } else if (message?.type === 'ready' && !settled) {
        ready = true;
        settled = true;
        clearTimeout(timer);
        resolve({ pid: child.pid, stop });
      }
    });
    child.stdout?.on('data', (chunk: Buffer) => lines.push(chunk));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      stderr = (stderr + text).slice(-STDERR_KEEP_BYTES);
    });
    child.once('error', (error) => fail(`exec probe helper ${helper} could not be started: ${error.message}`));
    child.once('close', (code, signal) => {
      const reason = exitReason(code, signal, stderr);
      const dropped = lines.dropped > 0 ? `; ${lines.dropped} over-long lines dropped` : '';
      if (!settled) fail(`exec probe cannot run: ${reason}`);
      else if (ready && !stopping) options.onExit(reason + dropped);
    });

    async function stop(): Promise<void> {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const grace = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(grace);
      }
    }
  });
}
