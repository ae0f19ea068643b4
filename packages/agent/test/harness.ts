// Test harness for the guard-agent CLI integration tests: builds throw-away agent homes,
// runs the real bin/guard-agent (no mocks) and reads bundles back with GNU tar.

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { constants, crc32, createGzip, deflateRawSync, gunzipSync, gzipSync } from 'node:zlib';
import { stringify as toYaml } from 'yaml';

const execFileP = promisify(execFile);

export const AGENT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The guard-agent under test: bin/guard-agent (the launcher on the pinned Node), or the
 * executable named by GUARD_AGENT_BIN — e.g. the single executable dist/guard-agent-linux-x64,
 * which packaging/test/agent-sea.test.ts runs these suites against.
 */
export const BIN = process.env.GUARD_AGENT_BIN
  ? resolve(process.env.GUARD_AGENT_BIN)
  : join(AGENT_DIR, 'bin', 'guard-agent');
export const AGENT_VERSION: string = JSON.parse(readFileSync(join(AGENT_DIR, 'package.json'), 'utf8')).version;
export const MiB = 1024 * 1024;
export const CAP_BYTES = 180 * MiB;
export const WORK_DIR_PREFIX = '.guard-collect-';
export const REDACTION_PATTERN = '^(api_key|enroll_token|.*_token|.*_secret)$';

import { refusedUrl } from '../../server/test/loopback.ts';
import { IS_ROOT, UNPRIVILEGED } from '../../server/test/unprivileged.ts';

export { IS_ROOT, refusedUrl, UNPRIVILEGED };

// ---------------------------------------------------------------------------------------
// Temp directories

/** Hands out fresh temp directories and removes all of them in cleanup(). */
export class TempDirs {
  private readonly made: string[] = [];
  async make(label = 'home'): Promise<string> {
    const dir = await mkdtemp(join(os.tmpdir(), `guard-collect-test-${label}-`));
    this.made.push(dir);
    return dir;
  }
  async cleanup(): Promise<void> {
    const dirs = this.made.splice(0);
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  }
}

// ---------------------------------------------------------------------------------------
// Agent homes

export interface HomeOptions {
  /** Content of agent.log; undefined: no log file at all. */
  log?: string | Buffer;
  /** Rotated segments and other files beside the log: file name → raw bytes as stored on disk. */
  logDirFiles?: Record<string, Buffer>;
  /** Extra config keys (merged over log_path and state_dir). */
  config?: Record<string, unknown>;
  /** Raw config text instead of generated YAML. */
  configText?: string;
  /** Written as <state_dir>/probe-status.json when given. */
  probeStatus?: unknown;
  /** Whether to create state_dir (default true). */
  createStateDir?: boolean;
  /** Name of the current log file (default agent.log). */
  logName?: string;
  /** state_dir, relative to the home root (default "state"). */
  stateDirName?: string;
}

export interface Home {
  root: string;
  configPath: string;
  logDir: string;
  logPath: string;
  stateDir: string;
  /** The default output directory, <state_dir>/support. */
  supportDir: string;
}

/** Builds an agent home under `root`: config YAML, log directory, state directory. */
export async function makeHome(root: string, options: HomeOptions = {}): Promise<Home> {
  const logDir = join(root, 'log');
  const logPath = join(logDir, options.logName ?? 'agent.log');
  const stateDir = join(root, options.stateDirName ?? 'state');
  const configPath = join(root, 'agent.yaml');
  await mkdir(logDir, { recursive: true });
  if (options.createStateDir ?? true) await mkdir(stateDir, { recursive: true });
  if (options.log !== undefined) await writeFile(logPath, options.log);
  for (const [name, bytes] of Object.entries(options.logDirFiles ?? {})) await writeFile(join(logDir, name), bytes);
  if (options.probeStatus !== undefined)
    await writeFile(join(stateDir, 'probe-status.json'), JSON.stringify(options.probeStatus));
  const text = options.configText ?? toYaml({ log_path: logPath, state_dir: stateDir, ...options.config });
  await writeFile(configPath, text);
  return { root, configPath, logDir, logPath, stateDir, supportDir: join(stateDir, 'support') };
}

export function gzipText(text: string | Buffer, level: number = constants.Z_DEFAULT_COMPRESSION): Buffer {
  return gzipSync(text, { level });
}

/** Header fields of a hand-built gzip member (RFC 1952 §2.3). */
export interface GzipMemberFields {
  /** FNAME: written NUL-terminated. */
  name?: string;
  /** FCOMMENT: written NUL-terminated. */
  comment?: string;
  /** FEXTRA: written as one subfield `AP` holding these bytes. */
  extra?: Buffer;
  /** FHCRC: a CRC16 of the header. */
  headerCrc?: boolean;
}

/**
 * One gzip member built by hand from RFC 1952, so the header can carry the optional fields
 * that Node's gzip never writes. CRC32 and ISIZE are correct unless overridden.
 */
export function gzipMember(content: string | Buffer, fields: GzipMemberFields = {}, crcOverride?: number): Buffer {
  const data = Buffer.from(content);
  const flags =
    (fields.headerCrc ? 0x02 : 0) |
    (fields.extra ? 0x04 : 0) |
    (fields.name !== undefined ? 0x08 : 0) |
    (fields.comment !== undefined ? 0x10 : 0);
  const parts: Buffer[] = [Buffer.from([0x1f, 0x8b, 0x08, flags, 0, 0, 0, 0, 0, 0x03])];
  if (fields.extra) {
    const sub = Buffer.concat([Buffer.from('AP'), u16(fields.extra.length), fields.extra]);
    parts.push(u16(sub.length), sub);
  }
  if (fields.name !== undefined) parts.push(Buffer.from(`${fields.name}\0`, 'latin1'));
  if (fields.comment !== undefined) parts.push(Buffer.from(`${fields.comment}\0`, 'latin1'));
  if (fields.headerCrc) parts.push(u16(crc32(Buffer.concat(parts)) & 0xffff));
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crcOverride ?? crc32(data), 0);
  trailer.writeUInt32LE(data.length % 2 ** 32, 4);
  return Buffer.concat([...parts, deflateRawSync(data), trailer]);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
}

export function gunzipText(bytes: Buffer): string {
  return gunzipSync(bytes).toString('utf8');
}

/** slog-style text line with a timestamp `agoMs` before now. */
export function slogLine(level: string, msg: string, attrs = '', agoMs = 60_000): string {
  const time = new Date(Date.now() - agoMs).toISOString();
  return `time=${time} level=${level} msg="${msg}"${attrs ? ` ${attrs}` : ''}`;
}

/** A named pipe (mkfifo(1)): opening it for reading blocks until a writer comes, unless O_NONBLOCK. */
export async function makeFifo(path: string): Promise<void> {
  await execFileP('mkfifo', [path]);
}

/** A listening Unix socket at `path`; close it after the test (closing removes the file). */
export async function makeSocket(path: string): Promise<Server> {
  const server = createServer();
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(path, ok));
  return server;
}

/** A character device node with /dev/null's numbers (mknod(1); the suite runs as root). */
export async function makeCharDevice(path: string): Promise<void> {
  await execFileP('mknod', [path, 'c', '1', '3']);
}

/** Writes `blocks` copies of a 1 MiB block of ordinary log lines, then `tail`; returns the byte size. */
export async function writeBigLog(path: string, blocks: number, tail = ''): Promise<number> {
  const line =
    'time=2026-11-21T08:00:28.000Z level=INFO msg="heartbeat" host=web-01 ip=10.0.0.5 user=deploy uptime_s=240 trace=0123456789abcdef\n';
  const block = Buffer.from(line.repeat(Math.floor(MiB / line.length)));
  const out = createWriteStream(path);
  for (let i = 0; i < blocks; i++) if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
  out.end(tail);
  await new Promise<void>((ok, fail) => out.on('finish', ok).on('error', fail));
  return (await stat(path)).size;
}

/**
 * Writes a gzip segment of `bytes` bytes on disk (within a few KiB), stored (level 0) so its
 * size on disk is what it occupies in the archive. Its text is log lines carrying base64 of
 * random bytes (a 256 KiB pattern, repeated: generating it stays fast).
 */
export async function writeStoredSegment(path: string, bytes: number): Promise<number> {
  const lines: string[] = [];
  const b64 = randomFillSync(Buffer.alloc(192 * 1024)).toString('base64');
  for (let i = 0; i < b64.length; i += 96) lines.push(`level=INFO msg=blob data=${b64.slice(i, i + 96)}`);
  const pattern = Buffer.from(`${lines.join('\n')}\n`);
  const gz = createGzip({ level: 0, chunkSize: MiB });
  const done = pipeline(gz, createWriteStream(path));
  // Stored deflate adds 5 bytes per block of up to 64 KiB, plus an 18-byte gzip frame.
  const payload = bytes - 18 - 5 * Math.ceil(bytes / 65535);
  for (let left = payload; left > 0; left -= pattern.length) {
    if (!gz.write(left >= pattern.length ? pattern : pattern.subarray(0, left)))
      await new Promise<void>((r) => gz.once('drain', () => r()));
  }
  gz.end();
  await done;
  return (await stat(path)).size;
}

// ---------------------------------------------------------------------------------------
// Running the CLI

export interface RunOptions {
  cwd?: string;
  /** Extra environment variables (GUARD_* are stripped from the inherited environment). */
  env?: Record<string, string>;
  /** umask the child starts with (default 022). */
  umask?: string;
  /** Kill with SIGKILL after this long (default 120 s): a hung CLI fails the test, not the run. */
  timeoutMs?: number;
  /** Run the CLI without root's power over file modes (see UNPRIVILEGED). */
  unprivileged?: boolean;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  pid: number;
  ms: number;
}

export interface RunningCli {
  child: ChildProcess;
  /** The PID of the node process running guard-agent (the wrappers exec, so the PID is kept). */
  pid: number;
  result: Promise<RunResult>;
  exited: () => boolean;
}

let compileCacheDir: string | undefined;

/**
 * Lets the agent processes share Node's on-disk compile cache (NODE_COMPILE_CACHE): it
 * caches compiled modules only and changes no behaviour, but roughly halves the CPU time of
 * each CLI start (type stripping and compiling), which dominates most of these tests.
 */
export function useCompileCache(dir: string | undefined): void {
  compileCacheDir = dir;
}

export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('GUARD_') || k.startsWith('NODE_TEST') || k === 'NODE_OPTIONS' || k === 'NODE_COMPILE_CACHE')
      continue;
    env[k] = v;
  }
  if (compileCacheDir) env.NODE_COMPILE_CACHE = compileCacheDir;
  return { ...env, ...extra };
}

/**
 * Starts bin/guard-agent through `sh -c 'umask …; exec bin …'`. Both sh and the bin wrapper
 * exec, so the spawned PID ends up being node itself and signals sent to it reach node.
 */
export function startCli(args: string[], options: RunOptions = {}): RunningCli {
  const t0 = Date.now();
  const sh = ['sh', '-c', `umask ${options.umask ?? '022'}; exec "$0" "$@"`, BIN, ...args];
  const argv = options.unprivileged ? [...UNPRIVILEGED, ...sh] : sh;
  const child = spawn(argv[0], argv.slice(1), {
    cwd: options.cwd ?? os.tmpdir(),
    env: childEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watch(child, t0, options.timeoutMs);
}

/** Collects a started child's output and exit into a RunResult (SIGKILL after `timeoutMs`). */
export function watch(child: ChildProcess, t0: number, timeoutMs = 120_000): RunningCli {
  let exited = false;
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout?.on('data', (d: Buffer) => stdout.push(d));
  child.stderr?.on('data', (d: Buffer) => stderr.push(d));
  const pid = child.pid as number;
  const result = new Promise<RunResult>((ok, fail) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      fail(e);
    });
    child.on('close', (code, signal) => {
      exited = true;
      clearTimeout(timer);
      ok({
        code,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        pid,
        ms: Date.now() - t0,
      });
    });
  });
  return { child, pid, result, exited: () => exited };
}

export function runCli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return startCli(args, options).result;
}

/** `guard-agent --config <home> support-bundle collect [--out out]`. */
export function collectArgs(home: Home, out?: string): string[] {
  return ['--config', home.configPath, 'support-bundle', 'collect', ...(out === undefined ? [] : ['--out', out])];
}

/**
 * Runs guard-agent as the foreground child of an outer `sh`, which then prints `rc=$?`: what a
 * shell script calling the agent sees. An inner sh writes its PID to `pidFile` before it
 * execs the bin wrapper (which execs node), so that PID is node's and can be signalled alone.
 */
export function startCliUnderShell(args: string[], pidFile: string, options: RunOptions = {}): RunningCli {
  const t0 = Date.now();
  const script = `umask 022; sh -c 'echo $$ > "$1"; shift; exec "$@"' inner "$@"; echo "rc=$?"`;
  const child = spawn('sh', ['-c', script, 'outer', pidFile, BIN, ...args], {
    cwd: options.cwd ?? os.tmpdir(),
    env: childEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watch(child, t0, options.timeoutMs);
}

/** The `sha256=` and `size=` lines of collect's stderr. */
export function parseSummary(stderr: string): { sha256: string | undefined; size: string | undefined } {
  const sha = /^sha256=(.*)$/m.exec(stderr);
  const size = /^size=(.*)$/m.exec(stderr);
  return { sha256: sha?.[1], size: size?.[1] };
}

export function describeRun(r: RunResult): string {
  return `exit code ${r.code}, signal ${r.signal}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
}

// ---------------------------------------------------------------------------------------
// Files and bundles

export function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Names of the `.guard-collect-*` work directories in `dir` ([] when dir is missing). */
export async function workDirs(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => n.startsWith(WORK_DIR_PREFIX));
  } catch {
    return [];
  }
}

/** Member names as GNU tar lists them (`tar --zstd -tf`). */
export async function listBundle(path: string): Promise<string[]> {
  const { stdout } = await execFileP('tar', ['--zstd', '-tf', path], { maxBuffer: 16 * MiB });
  return stdout.split('\n').filter((l) => l !== '');
}

/** Extracts a bundle with GNU tar into a fresh directory under `into`; returns name → bytes. */
export async function extractBundle(path: string, into: string): Promise<Map<string, Buffer>> {
  const dir = await mkdtemp(join(into, 'extract-'));
  await execFileP('tar', ['--zstd', '-xf', path, '-C', dir], { maxBuffer: 16 * MiB });
  const members = new Map<string, Buffer>();
  for (const name of await readdir(dir)) members.set(name, await readFile(join(dir, name)));
  await rm(dir, { recursive: true, force: true });
  return members;
}

/** Every member as text; `.gz` members are gunzipped (a member that does not gunzip is kept raw). */
export function memberTexts(members: Map<string, Buffer>): Map<string, string> {
  const texts = new Map<string, string>();
  for (const [name, bytes] of members) {
    let text = bytes.toString('latin1');
    if (name.endsWith('.gz')) {
      try {
        text = gunzipSync(bytes).toString('latin1');
      } catch {
        // kept raw: the caller's search still sees every byte
      }
    }
    texts.set(name, text);
  }
  return texts;
}

/**
 * Every member as one searchable string: its raw bytes and, for `.gz` members, whatever a
 * lenient gunzip gets out of them (also from a truncated stream), so a secret is found in
 * whatever form it was stored.
 */
export function searchTexts(members: Map<string, Buffer>): Map<string, string> {
  const texts = new Map<string, string>();
  for (const [name, bytes] of members) {
    let text = bytes.toString('latin1');
    if (name.endsWith('.gz')) {
      try {
        text += `\n${gunzipSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH }).toString('latin1')}`;
      } catch {
        // not gzip at all: the raw bytes are what is searched
      }
    }
    texts.set(name, text);
  }
  return texts;
}

/**
 * Text in which byte offset `boundary` falls at index `splitAt` of `line`: filler lines, a
 * pad line, `line`, then `after` more filler lines.
 */
export function straddlingText(boundary: number, line: string, splitAt: number, after = 20): string {
  const filler = 'time=2026-11-21T08:00:00.000Z level=INFO msg="filler" host=web-01 ip=10.0.0.5\n';
  const prefix = boundary - splitAt;
  let text = filler.repeat(Math.floor(prefix / filler.length) - 1);
  const pad = prefix - text.length; // > filler.length, so the pad line is at least "x…\n"
  text += `${'x'.repeat(pad - 1)}\n`;
  if (Buffer.byteLength(text) !== prefix) throw new Error('straddlingText: use ASCII only');
  return `${text}${line}\n${filler.repeat(after)}`;
}

/** Polls `probe` every `everyMs` until it returns a value other than undefined, or gives up. */
export async function pollFor<T>(
  probe: () => Promise<T | undefined>,
  { timeoutMs = 30_000, everyMs = 3, stop }: { timeoutMs?: number; everyMs?: number; stop?: () => boolean } = {},
): Promise<T | undefined> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (stop?.()) return undefined;
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return undefined;
}

export function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** Bytes the process has read so far (`rchar` of /proc/<pid>/io), or undefined once it is gone. */
export async function bytesRead(pid: number): Promise<number | undefined> {
  try {
    const m = /^rchar: (\d+)$/m.exec(await readFile(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Parses os-release(5) the simple way: KEY=value, optional double or single quotes. */
export function parseOsRelease(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2].replace(/^(["'])(.*)\1$/, '$2');
  }
  return out;
}
