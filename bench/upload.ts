// `npm run bench:upload`: times the real `guard-agent support-bundle upload` of a 1 GiB bundle
// to the real guard-server, against curl PUTting the same file to a fresh presigned URL of the
// same server, and prints a report with goals (PASS/MISS).
//
//   1. Builds once, cached under bench/.work/ (gitignored): upload-1g.tar.zst, a valid bundle of
//      ~1 GiB: a tar (tar-stream) compressed with node:zlib zstd level 1, whose members are
//      incompressible pseudo-random bytes (AES-128-CTR keystream, fixed keys: the same file on
//      every machine) plus a BUNDLE-MANIFEST.json listing each member's size and SHA-256
//      (built with the agent's own buildManifest, checked with its verifyBundle). Streamed.
//   2. Starts bin/guard-server (child process, --log-level info: its per-request log lines give
//      the server-side duration of presign, PUT and register) on a data dir under bench/.work
//      (the same filesystem as the bundle), runs `guard-server setup --json`, and enrolls an
//      agent home with `guard-agent enroll --url … --token -`.
//   3. REPS times, alternately:
//        ours:   /usr/bin/time guard-agent --config … support-bundle upload upload-1g.tar.zst
//                (wall of the whole command: local verify + hash, presign, PUT, register);
//        anchor: a fresh presign (fetch, the agent's API key), then
//                /usr/bin/time curl -T upload-1g.tar.zst -H 'content-type: application/octet-stream' URL
//                (wall of curl only).
//      The server's RSS is polled every 50 ms (/proc/<pid>/status VmRSS; VmHWM after a
//      clear_refs reset as a cross-check); the agent's peak RSS is GNU time's %M, and its RSS
//      and CPU are also polled, to split them at the moment the presign reached the server
//      (local check before it; PUT and register after). Stored objects are deleted after every
//      run. Medians are reported. Before the reps, two untimed agent uploads: one on an empty
//      compile cache (its figures are printed: a host's first upload), one to warm the
//      launcher's cache.
//   4. Prints machine facts, the table, a phase breakdown of the agent's command (startup +
//      local check = agent start → presign arrival; presign, PUT, register = the server's
//      responseTime of each request) and the goals. The PUT-only throughput is the bundle size
//      over the server-side PUT time, compared with the same measure of curl's PUT (the whole
//      command is compared with curl's wall time).
//      Exits 0 whatever the goals say; non-zero only when something fails to run.
//
// BENCH_PROF=DIR: also writes CPU profiles (--cpu-prof) of the server child (whole run) and of
// one extra, untimed agent upload under DIR, and prints their top self-time functions. The
// timed figures then include the server's profiler overhead.

import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createCipheriv, createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Readable, Transform, type TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { constants, createZstdCompress, createZstdDecompress } from 'node:zlib';
import { MANIFEST_MEMBER, type ManifestMember } from '@guard/contract';
import tar from 'tar-stream';
import { buildManifest, manifestBytes, memberHeader, verifyBundle } from '../packages/agent/src/bundle/index.ts';
import { AGENT_VERSION } from '../packages/agent/src/version.ts';
import { freePort } from './lib-tls.ts';

const MiB = 1024 * 1024;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const AGENT_BIN = join(ROOT, 'packages/agent/bin/guard-agent');
const SERVER_BIN = join(ROOT, 'packages/server/bin/guard-server');
const WORK = join(ROOT, 'bench/.work');
const BUNDLE = join(WORK, 'upload-1g.tar.zst');
const BUNDLE_META = join(WORK, 'upload-1g.json');
const GNU_TIME = '/usr/bin/time';

/** Bump when the generated bundle changes: a cache with another version is rebuilt. */
const DATA_VERSION = 1;
const CHUNK = 1 << 20;
/** agent.log plus rotated segments: 8 × 128 MiB = 1 GiB of incompressible member bytes. */
const LOG_MEMBERS = ['agent.log', ...Array.from({ length: 7 }, (_, i) => `agent.log.${i + 1}.gz`)];
const LOG_MEMBER_BYTES = 128 * MiB;
const ZSTD_LEVEL = 1;
const REPS = 3;
const POLL_MS = 50;

const GOAL_RATIO = 0.8;
const GOAL_AGENT_RSS_MIB = 100;
const GOAL_SERVER_RSS_MIB = 100;

// ---------------------------------------------------------------------------------------
// The 1 GiB bundle

/** Deterministic incompressible bytes: the AES-128-CTR keystream of a key derived from `seed`. */
function randomSource(size: number, seed: string): Readable {
  const key = createHash('sha256').update(`guard-bench-upload:${seed}`).digest().subarray(0, 16);
  const cipher = createCipheriv('aes-128-ctr', key, Buffer.alloc(16));
  const zeros = Buffer.alloc(CHUNK);
  let left = size;
  return new Readable({
    highWaterMark: CHUNK,
    read() {
      if (left === 0) {
        this.push(null);
        return;
      }
      const n = Math.min(CHUNK, left);
      left -= n;
      this.push(cipher.update(n === CHUNK ? zeros : zeros.subarray(0, n)));
    },
  });
}

/** Passes bytes through while hashing and counting them. */
class HashTap extends Transform {
  readonly hash: Hash = createHash('sha256');
  bytes = 0;
  constructor() {
    super({ highWaterMark: CHUNK });
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    done(null, chunk);
  }
}

interface BundleMeta {
  version: number;
  size: number;
  sha256: string;
  contentBytes: number;
  members: number;
}

/** Writes the bundle to a temp file, streaming (bounded memory), then renames it into place. */
async function buildBundle(): Promise<BundleMeta> {
  const mtime = new Date('2025-01-15T09:30:00Z');
  const tmp = `${BUNDLE}.tmp-${process.pid}`;
  const pack = tar.pack();
  const fileTap = new HashTap();
  const zstd = createZstdCompress({
    chunkSize: CHUNK,
    params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL, [constants.ZSTD_c_checksumFlag]: 1 },
  });
  const written = pipeline(pack as unknown as Readable, zstd, fileTap, createWriteStream(tmp, { mode: 0o600 }));
  written.catch(() => {}); // awaited below
  const contents: ManifestMember[] = [];
  const addBuffer = async (name: string, bytes: Buffer) => {
    await new Promise<void>((ok, fail) =>
      pack.entry(memberHeader(name, bytes.length, mtime), bytes, (e) => (e ? fail(e) : ok())),
    );
    return { name, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  };
  try {
    for (const name of LOG_MEMBERS) {
      const tap = new HashTap();
      let entryDone!: Promise<void>;
      const entry = await new Promise<Writable>((resolve) => {
        entryDone = new Promise<void>((ok, fail) => {
          resolve(
            pack.entry(memberHeader(name, LOG_MEMBER_BYTES, mtime), (e) => (e ? fail(e) : ok())) as unknown as Writable,
          );
        });
      });
      await Promise.all([pipeline(randomSource(LOG_MEMBER_BYTES, name), tap, entry), entryDone]);
      contents.push({ name, size: tap.bytes, sha256: tap.hash.digest('hex') });
      process.stdout.write(`  ${name}: ${mib(tap.bytes)} MiB\n`);
    }
    const system = { hostname: 'bench-upload', os: 'linux', note: 'synthetic bundle of bench/upload.ts' };
    contents.push(await addBuffer('system.json', Buffer.from(`${JSON.stringify(system, null, 2)}\n`)));
    contents.push(await addBuffer('config.redacted.json', Buffer.from('{\n  "state_dir": "/var/lib/guard"\n}\n')));
    const manifest = buildManifest({
      agentVersion: AGENT_VERSION,
      generatedAt: mtime,
      trigger: 'cli',
      contents,
      trimmedSegments: [],
      maskedByMember: new Map(LOG_MEMBERS.map((n) => [n, 0])),
      collectionErrors: [],
    });
    await addBuffer(MANIFEST_MEMBER, manifestBytes(manifest)); // last, as collect writes it; not in contents
    pack.finalize();
    await written;
    await rename(tmp, BUNDLE);
  } catch (error) {
    pack.destroy(error as Error);
    await rm(tmp, { force: true });
    throw error;
  }
  return {
    version: DATA_VERSION,
    size: fileTap.bytes,
    sha256: fileTap.hash.digest('hex'),
    contentBytes: contents.reduce((a, m) => a + m.size, 0),
    members: contents.length,
  };
}

async function ensureBundle(): Promise<BundleMeta> {
  try {
    const meta = JSON.parse(await readFile(BUNDLE_META, 'utf8')) as BundleMeta;
    if (meta.version === DATA_VERSION && (await stat(BUNDLE)).size === meta.size) return meta;
  } catch {
    // no (usable) cache: build it
  }
  await mkdir(WORK, { recursive: true });
  await rm(BUNDLE_META, { force: true });
  console.log(`building ${BUNDLE} (cached for later runs)…`);
  const t0 = performance.now();
  const meta = await buildBundle();
  const built = (performance.now() - t0) / 1000;
  const manifest = await verifyBundle(BUNDLE);
  console.log(
    `  built in ${built.toFixed(1)} s: ${mib(meta.size)} MiB, ${meta.members} members, ` +
      `verified against its manifest (${manifest.contents.length} members)`,
  );
  await writeFile(BUNDLE_META, `${JSON.stringify(meta, null, 2)}\n`);
  return meta;
}

// ---------------------------------------------------------------------------------------
// Processes and measurements

function childEnv(nodeOptions?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy']) delete env[k];
  if (nodeOptions) env.NODE_OPTIONS = nodeOptions;
  return env;
}

/** One pino line of the server (the fields this bench reads). */
interface LogLine {
  time: number;
  reqId?: string;
  msg?: string;
  req?: { method: string; url: string };
  res?: { statusCode: number };
  responseTime?: number;
  bundleId?: string;
  ms?: number;
}

interface Server {
  child: ChildProcess;
  pid: number;
  url: string;
  logs: LogLine[];
  stderr(): string;
  stop(): Promise<void>;
}

async function startServer(dataDir: string, port: number, nodeOptions?: string): Promise<Server> {
  // No tenant quota: every rep keeps its 1 GiB bundle registered (only the files are deleted).
  const args = [
    '--data-dir',
    dataDir,
    '--listen',
    `127.0.0.1:${port}`,
    '--log-level',
    'info',
    '--tenant-quota-bytes',
    '0',
  ];
  const child = spawn(SERVER_BIN, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv(nodeOptions),
  });
  const logs: LogLine[] = [];
  let partial = '';
  child.stdout?.on('data', (c: Buffer) => {
    partial += c.toString('utf8');
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        // not a log line
      }
    }
  });
  let err = '';
  child.stderr?.on('data', (c: Buffer) => {
    err = (err + c.toString('utf8')).slice(-20_000);
  });
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`guard-server exited during start (${child.exitCode ?? child.signalCode}):\n${err}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`guard-server did not answer /healthz within 30 s:\n${err}`);
    await sleep(100);
  }
  return {
    child,
    pid: child.pid as number,
    url,
    logs,
    stderr: () => err,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function procStatusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** utime + stime of one process, in seconds. */
function procCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/**
 * Polls a process's VmRSS every POLL_MS, keeping timestamped samples (so that a peak can be put
 * in a phase); resets its VmHWM first (clear_refs 5) when allowed. `pid` may resolve late (the
 * agent is a child of GNU time): samples start once it does.
 */
class RssPoller {
  private readonly pidOf: () => number | undefined;
  private pid: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  readonly samples: { t: number; kiB: number; cpu: number }[] = [];
  constructor(pid: number | (() => number | undefined)) {
    this.pidOf = typeof pid === 'number' ? () => pid : pid;
  }
  private sample(): void {
    if (this.pid === undefined) {
      this.pid = this.pidOf();
      if (this.pid === undefined) return;
      try {
        writeFileSync(`/proc/${this.pid}/clear_refs`, '5');
      } catch {
        // not allowed: VmHWM is then the peak since the process started
      }
    }
    try {
      this.samples.push({ t: Date.now(), kiB: procStatusKiB(this.pid, 'VmRSS'), cpu: procCpuSeconds(this.pid) });
    } catch {
      // the process is gone
    }
  }
  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), POLL_MS);
  }
  /** Stops; returns the max polled VmRSS and VmHWM (0 when the process is already gone). */
  stop(): { maxRssKiB: number; hwmKiB: number } {
    clearInterval(this.timer);
    let hwmKiB = 0;
    if (this.pid !== undefined) {
      this.sample();
      try {
        hwmKiB = procStatusKiB(this.pid, 'VmHWM');
      } catch {
        // gone
      }
    }
    return { maxRssKiB: this.maxBetween(0, Number.POSITIVE_INFINITY), hwmKiB };
  }
  /** CPU seconds (user + system) the process had used at its last sample before `t`. */
  cpuBefore(t: number): number {
    let cpu = 0;
    for (const s of this.samples) if (s.t < t) cpu = s.cpu;
    return cpu;
  }
  /** Max sampled VmRSS (KiB) with from <= t < to (epoch ms). */
  maxBetween(from: number, to: number): number {
    let max = 0;
    for (const s of this.samples) if (s.t >= from && s.t < to) max = Math.max(max, s.kiB);
    return max;
  }
}

/** The one child of `pid` (GNU time's child: the agent's node, after the sh wrapper exec'd). */
function childPid(pid: number): number | undefined {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    if (kids.length !== 1) return undefined;
    // Before the wrapper's exec the child is sh; after it, node (whose thread name is MainThread).
    return basename(readlinkSync(`/proc/${kids[0]}/exe`)).startsWith('node') ? Number(kids[0]) : undefined;
  } catch {
    return undefined;
  }
}

interface Timed {
  /** Wall seconds, measured here around the spawn of GNU time (ms precision). */
  wall: number;
  rssKiB: number;
  cpu: number;
  startedAt: number;
  endedAt: number;
  stdout: string;
}

/** Runs argv under GNU time, asynchronously (the RSS poller keeps running); throws on failure. */
async function timed(
  label: string,
  argv: string[],
  timeFile: string,
  env: NodeJS.ProcessEnv,
  onSpawn?: (pid: number) => void,
): Promise<Timed> {
  const startedAt = Date.now();
  const t0 = performance.now();
  const child = spawn(GNU_TIME, ['-f', '%e %M %U %S', '-o', timeFile, ...argv], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  if (child.pid !== undefined) onSpawn?.(child.pid);
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  child.stderr?.on('data', (c: Buffer) => {
    err = (err + c.toString('utf8')).slice(-20_000);
  });
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  const wall = (performance.now() - t0) / 1000;
  const endedAt = Date.now();
  if (code !== 0) throw new Error(`${label} failed (exit ${code ?? signal}):\n${err.trim()}\n${out.trim()}`);
  const lines = readFileSync(timeFile, 'utf8').trim().split('\n');
  const [, rss, user, sys] = (lines.at(-1) ?? '').split(' ').map(Number);
  if (![rss, user, sys].every(Number.isFinite)) throw new Error(`${label}: cannot parse GNU time output`);
  return { wall, rssKiB: rss, cpu: user + sys, startedAt, endedAt, stdout: out };
}

interface RequestTiming {
  method: string;
  url: string;
  /** Epoch ms at which the server logged the request's arrival (headers read). */
  start: number;
  /** Server-side ms from arrival to the response's end (fastify's responseTime). */
  ms: number;
  status: number;
}

/** Requests of the server log from index `from` on, keyed by method and path. */
function requestsSince(logs: LogLine[], from: number): RequestTiming[] {
  const byId = new Map<string, RequestTiming>();
  for (const line of logs.slice(from)) {
    if (!line.reqId) continue;
    if (line.msg === 'incoming request' && line.req)
      byId.set(line.reqId, { method: line.req.method, url: line.req.url, start: line.time, ms: Number.NaN, status: 0 });
    else if (line.msg === 'request completed' && line.responseTime !== undefined) {
      const r = byId.get(line.reqId);
      if (r) {
        r.ms = line.responseTime;
        r.status = line.res?.statusCode ?? 0;
      }
    }
  }
  return [...byId.values()];
}

function findRequest(reqs: RequestTiming[], method: string, prefix: string, what: string): RequestTiming {
  const r = reqs.filter((q) => q.method === method && q.url.startsWith(prefix));
  if (r.length !== 1 || !Number.isFinite(r[0].ms))
    throw new Error(`expected one completed ${what} request in the server log, found ${r.length}`);
  if (r[0].status < 200 || r[0].status > 299) throw new Error(`${what} answered ${r[0].status}`);
  return r[0];
}

function bundleIdOf(uploadStdout: string): string {
  const m = /^bundle_id=(\S+)$/m.exec(uploadStdout);
  if (!m) throw new Error(`no bundle_id in:\n${uploadStdout}`);
  return m[1];
}

/** Waits (at most 5 min) for the server's log line of the bundle's analysis; its time and the server's RSS meanwhile. */
async function analysed(srv: Server, bundleId: string): Promise<{ ms: number; maxRssKiB: number }> {
  const poll = new RssPoller(srv.pid);
  poll.start();
  const deadline = Date.now() + 300_000;
  try {
    for (;;) {
      const line = srv.logs.find((l) => l.bundleId === bundleId && l.msg !== undefined && /analys/.test(l.msg));
      if (line) {
        if (line.msg !== 'bundle analysed') throw new Error(`the analysis of ${bundleId}: ${line.msg}`);
        return { ms: line.ms ?? Number.NaN, maxRssKiB: poll.stop().maxRssKiB };
      }
      if (Date.now() > deadline) throw new Error(`the analysis of ${bundleId} did not end within 5 min`);
      await sleep(100);
    }
  } finally {
    poll.stop();
  }
}

async function deleteObjects(dataDir: string): Promise<void> {
  await rm(join(dataDir, 'objects', 'bundles'), { recursive: true, force: true });
}

/** Reads the file once so that no timed run pays for a cold page cache. */
async function warm(path: string): Promise<number> {
  const t0 = performance.now();
  for await (const _ of createReadStream(path, { highWaterMark: 4 * MiB })) {
    // discard
  }
  return (performance.now() - t0) / 1000;
}

// ---------------------------------------------------------------------------------------
// Reporting helpers

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function mib(bytes: number): string {
  return (bytes / MiB).toFixed(1);
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

function firstLine(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? `${r.stdout}${r.stderr}`.split('\n')[0].trim() : `${cmd}: not available`;
}

function table(head: string[], rows: string[][], leftCols = 1): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < leftCols ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Top self-time entries of the .cpuprofile files in `dir` (largest file: the busy process). */
async function profileSummary(dir: string, top = 12): Promise<string> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.cpuprofile'));
  if (names.length === 0) return `  (no profile in ${dir})`;
  const sized = await Promise.all(names.map(async (n) => ({ n, size: (await stat(join(dir, n))).size })));
  sized.sort((a, b) => b.size - a.size);
  const file = join(dir, sized[0].n);
  const prof = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const frame = new Map(prof.nodes.map((n) => [n.id, n.callFrame]));
  const self = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const f = frame.get(prof.samples[i]);
    const dt = prof.timeDeltas[i] ?? 0;
    total += dt;
    if (!f) continue;
    const where = f.url
      ? `${f.url.replace(/^file:\/\/.*?\/(node_modules|packages)\//, '$1/')}:${f.lineNumber + 1}`
      : '';
    const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `  ${file}: ${(total / 1e6).toFixed(2)} s sampled`,
    ...rows.map(([k, us]) => `  ${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1e6).toFixed(2)} s  ${k}`),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------

if (spawnSync(GNU_TIME, ['-f', '%e', 'true']).status !== 0)
  throw new Error(
    `${GNU_TIME} (GNU time) is missing: install the Debian package "time" (scripts/install-test-deps.sh)`,
  );
if (spawnSync('curl', ['--version']).status !== 0) throw new Error('curl is missing');

const profDir = process.env.BENCH_PROF;
const meta = await ensureBundle();
const runDir = join(WORK, `upload-run-${process.pid}`);
const dataDir = join(runDir, 'data');
const home = join(runDir, 'agent-home');
const timeFile = join(runDir, 'time.txt');
await rm(runDir, { recursive: true, force: true });
await mkdir(home, { recursive: true });
const agentConfig = join(home, 'agent.yaml');
await writeFile(agentConfig, `state_dir: ${join(home, 'state')}\nlog_path: ${join(home, 'agent.log')}\n`);
await writeFile(join(home, 'agent.log'), '');

let server: Server | undefined;
try {
  const setup = JSON.parse(
    execFileSync(SERVER_BIN, ['setup', '--data-dir', dataDir, '--json'], { encoding: 'utf8', env: childEnv() }),
  ) as { enroll_token: string };
  const serverProfDir = profDir ? join(profDir, 'server') : undefined;
  if (serverProfDir) await mkdir(serverProfDir, { recursive: true });
  server = await startServer(
    dataDir,
    await freePort(),
    serverProfDir ? `--cpu-prof --cpu-prof-dir=${serverProfDir}` : undefined,
  );
  const srv = server;
  const enroll = spawnSync(AGENT_BIN, ['--config', agentConfig, 'enroll', '--url', srv.url, '--token', '-'], {
    input: `${setup.enroll_token}\n`,
    encoding: 'utf8',
    env: childEnv(),
  });
  if (enroll.status !== 0) throw new Error(`guard-agent enroll failed (exit ${enroll.status}):\n${enroll.stderr}`);
  const apiKey = (JSON.parse(await readFile(join(home, 'state', 'enrollment.json'), 'utf8')) as { api_key: string })
    .api_key;

  const sameFs = (await stat(dataDir)).dev === (await stat(BUNDLE)).dev;
  const df = spawnSync('df', ['-h', '--output=source,fstype,size,avail', WORK], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')
    .at(-1);
  const warmS = await warm(BUNDLE);
  const shaT0 = performance.now();
  const fileHash = createHash('sha256');
  for await (const chunk of createReadStream(BUNDLE, { highWaterMark: CHUNK })) fileHash.update(chunk as Buffer);
  const shaS = (performance.now() - shaT0) / 1000;
  if (fileHash.digest('hex') !== meta.sha256)
    throw new Error(`${BUNDLE} does not match its cached SHA-256: delete it and ${BUNDLE_META} to rebuild`);
  const zstdT0 = performance.now();
  await pipeline(
    createReadStream(BUNDLE, { highWaterMark: CHUNK }),
    createZstdDecompress({ chunkSize: CHUNK }),
    new Writable({ highWaterMark: CHUNK, write: (_c, _e, done) => done() }),
  );
  const zstdS = (performance.now() - zstdT0) / 1000;
  // The agent's fixed costs: `guard-agent --version` loads the whole module graph (main.ts
  // imports every command statically) and exits: node startup time and baseline RSS.
  const startup: number[] = [];
  const startupRss: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const v = spawnSync(GNU_TIME, ['-f', '%M', '-o', timeFile, AGENT_BIN, '--version'], { env: childEnv() });
    startup.push((performance.now() - t0) / 1000);
    if (v.status !== 0) throw new Error(`guard-agent --version failed (exit ${v.status})`);
    startupRss.push(Number(readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)) / 1024);
  }
  const serverIdleMiB = procStatusKiB(srv.pid, 'VmRSS') / 1024;

  console.log('\nguard-agent support-bundle upload benchmark');
  console.log(
    `machine: nproc=${os.availableParallelism()}, ${os.cpus()[0]?.model ?? 'unknown cpu'}, ` +
      `${mib(os.totalmem())} MiB RAM, kernel ${os.release()}, node ${process.version}, load average ${loadAverage()}`,
  );
  console.log(`tools: ${firstLine('curl', ['--version'])}; ${firstLine(GNU_TIME, ['--version'])}`);
  console.log(
    `disk: ${df} (bundle and server data dir on the ${sameFs ? 'same' : 'DIFFERENT'} filesystem); ` +
      `warm read of the bundle ${warmS.toFixed(2)} s`,
  );
  console.log(
    `single passes over the bundle in this node process (1 MiB chunks): SHA-256 ${shaS.toFixed(2)} s ` +
      `(${(meta.size / MiB / shaS).toFixed(0)} MiB/s), zstd decompress ${zstdS.toFixed(2)} s ` +
      `(${(meta.size / MiB / zstdS).toFixed(0)} MiB/s)`,
  );
  console.log(
    `bundle: ${BUNDLE}: ${mib(meta.size)} MiB (${meta.size} bytes), ${meta.members} members, ` +
      `${mib(meta.contentBytes)} MiB of incompressible content, zstd level ${ZSTD_LEVEL}`,
  );
  console.log(
    `server: ${srv.url}, pid ${srv.pid}, data dir ${dataDir}; idle RSS ${serverIdleMiB.toFixed(1)} MiB; ` +
      `agent (guard-agent --version: node startup + module graph) ${(median(startup) * 1000).toFixed(0)} ms, ` +
      `peak RSS ${median(startupRss).toFixed(1)} MiB`,
  );
  if (profDir) console.log(`BENCH_PROF=${profDir}: the server runs under --cpu-prof (its overhead is in the figures)`);

  interface OursRun {
    t: Timed;
    server: { maxRssKiB: number; hwmKiB: number };
    serverCpu: number;
    local: number;
    presign: number;
    put: number;
    register: number;
    rest: number;
    load: string;
    /** Polled agent VmRSS: max before the presign arrived (local check) and after it (network). */
    agentRssLocalKiB: number;
    agentRssNetKiB: number;
    /** Agent CPU seconds used before the presign arrived (polled; the rest of t.cpu is after it). */
    agentCpuLocal: number;
    /** Polled server VmRSS: before the run, max during the PUT and during the register. */
    serverRssBeforeKiB: number;
    serverRssPutKiB: number;
    serverRssRegisterKiB: number;
  }
  interface CurlRun {
    t: Timed;
    server: { maxRssKiB: number; hwmKiB: number };
    serverCpu: number;
    put: number;
    load: string;
  }
  const ours: OursRun[] = [];
  const anchor: CurlRun[] = [];
  const analyses: { ms: number; maxRssKiB: number }[] = [];
  const agentEnv = childEnv();

  // The agent's launcher keeps Node's compile cache (node_modules/.cache/guard-agent); a run
  // after a source change strips TypeScript again, which costs RSS and time. Two untimed
  // uploads before the reps: one on an empty cache (reported: a host's first upload), one on
  // the launcher's own cache, so that no timed rep depends on what ran before the bench.
  const uploadArgv = [AGENT_BIN, '--config', agentConfig, 'support-bundle', 'upload', BUNDLE];
  const cold = await timed('guard-agent upload (cold compile cache)', uploadArgv, timeFile, {
    ...agentEnv,
    NODE_COMPILE_CACHE: join(runDir, 'compile-cache-cold'),
  });
  await analysed(srv, bundleIdOf(cold.stdout));
  await deleteObjects(dataDir);
  const warmUp = await timed('guard-agent upload (warm-up)', uploadArgv, timeFile, agentEnv);
  await analysed(srv, bundleIdOf(warmUp.stdout));
  await deleteObjects(dataDir);
  console.log(
    `agent upload on an empty compile cache (untimed, not in the medians): ${cold.wall.toFixed(2)} s wall, ` +
      `${cold.cpu.toFixed(2)} s CPU, peak RSS ${mib(cold.rssKiB * 1024)} MiB`,
  );

  console.log(`\nrunning ${REPS} repetitions of each, alternately…`);
  for (let rep = 1; rep <= REPS; rep++) {
    // ours
    {
      const from = srv.logs.length;
      const poll = new RssPoller(srv.pid);
      const cpu0 = procCpuSeconds(srv.pid);
      poll.start();
      let agentPoll: RssPoller | undefined;
      const t = await timed(
        'guard-agent support-bundle upload',
        [AGENT_BIN, '--config', agentConfig, 'support-bundle', 'upload', BUNDLE],
        timeFile,
        agentEnv,
        (pid) => {
          agentPoll = new RssPoller(() => childPid(pid));
          agentPoll.start();
        },
      );
      agentPoll?.stop();
      const rss = poll.stop();
      const serverCpu = procCpuSeconds(srv.pid) - cpu0;
      if (!/^bundle_id=\S+\nobject_key=\S+\nuploaded_at=\S+\n$/.test(t.stdout))
        throw new Error(`unexpected upload output:\n${t.stdout}`);
      await sleep(100); // the last log lines
      const reqs = requestsSince(srv.logs, from);
      const presign = findRequest(reqs, 'POST', '/v1/support/bundle/upload-url', 'presign');
      const put = findRequest(reqs, 'PUT', '/v1/objects/', 'PUT');
      const register = findRequest(reqs, 'POST', '/v1/support/bundle/register', 'register');
      const run: OursRun = {
        t,
        server: rss,
        serverCpu,
        local: (presign.start - t.startedAt) / 1000,
        presign: presign.ms / 1000,
        put: put.ms / 1000,
        register: register.ms / 1000,
        rest: 0,
        load: loadAverage(),
        agentRssLocalKiB: agentPoll?.maxBetween(0, presign.start) ?? 0,
        agentRssNetKiB: agentPoll?.maxBetween(presign.start, Number.POSITIVE_INFINITY) ?? 0,
        agentCpuLocal: agentPoll?.cpuBefore(presign.start) ?? Number.NaN,
        serverRssPutKiB: poll.maxBetween(put.start, put.start + put.ms),
        serverRssRegisterKiB: poll.maxBetween(register.start, register.start + register.ms + POLL_MS),
        serverRssBeforeKiB: poll.samples[0]?.kiB ?? 0,
      };
      run.rest = t.wall - run.local - run.presign - run.put - run.register;
      ours.push(run);
      // The server analyses every registered bundle (insights, issue 12): a read of the whole
      // 1 GiB. Wait for it, so that it runs beside neither curl's PUT nor the next upload.
      const analysis = await analysed(srv, bundleIdOf(t.stdout));
      analyses.push(analysis);
      await deleteObjects(dataDir);
      console.log(
        `  rep ${rep} ours: ${t.wall.toFixed(2)} s wall (${(meta.size / MiB / t.wall).toFixed(0)} MiB/s), ` +
          `${t.cpu.toFixed(2)} s agent CPU, agent peak RSS ${mib(t.rssKiB * 1024)} MiB; ` +
          `startup+local check ${run.local.toFixed(2)} s, presign ${(run.presign * 1000).toFixed(0)} ms, ` +
          `PUT ${run.put.toFixed(2)} s, register ${run.register.toFixed(2)} s, other ${run.rest.toFixed(2)} s; ` +
          `server max RSS ${mib(rss.maxRssKiB * 1024)} MiB (HWM ${mib(rss.hwmKiB * 1024)}), ` +
          `server CPU ${serverCpu.toFixed(2)} s; load ${run.load}`,
      );
      console.log(
        `         RSS by phase: agent (polled) local check ${mib(run.agentRssLocalKiB * 1024)} MiB, ` +
          `presign..exit ${mib(run.agentRssNetKiB * 1024)} MiB; server before ${mib(run.serverRssBeforeKiB * 1024)} MiB, ` +
          `PUT ${mib(run.serverRssPutKiB * 1024)} MiB, register ${mib(run.serverRssRegisterKiB * 1024)} MiB; ` +
          `agent CPU local check ${run.agentCpuLocal.toFixed(2)} s, presign..exit ${(t.cpu - run.agentCpuLocal).toFixed(2)} s`,
      );
    }
    // anchor: curl
    {
      const res = await fetch(`${srv.url}/v1/support/bundle/upload-url`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ filename: 'upload-1g.tar.zst', size: meta.size, sha256: meta.sha256 }),
      });
      if (res.status !== 200) throw new Error(`presign for curl answered ${res.status}: ${await res.text()}`);
      const presigned = (await res.json()) as { url: string; headers?: Record<string, string> };
      const headerArgs = Object.entries(presigned.headers ?? { 'content-type': 'application/octet-stream' }).flatMap(
        ([k, v]) => ['-H', `${k}: ${v}`],
      );
      const from = srv.logs.length;
      const poll = new RssPoller(srv.pid);
      const cpu0 = procCpuSeconds(srv.pid);
      poll.start();
      const t = await timed(
        'curl -T',
        [
          'curl',
          '-sS',
          '--fail-with-body',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '-T',
          BUNDLE,
          ...headerArgs,
          presigned.url,
        ],
        timeFile,
        childEnv(),
      );
      const rss = poll.stop();
      const serverCpu = procCpuSeconds(srv.pid) - cpu0;
      if (t.stdout.trim() !== '200') throw new Error(`curl PUT answered ${t.stdout}`);
      await sleep(100);
      const put = findRequest(requestsSince(srv.logs, from), 'PUT', '/v1/objects/', 'curl PUT');
      anchor.push({ t, server: rss, serverCpu, put: put.ms / 1000, load: loadAverage() });
      await deleteObjects(dataDir);
      console.log(
        `  rep ${rep} curl: ${t.wall.toFixed(2)} s wall (${(meta.size / MiB / t.wall).toFixed(0)} MiB/s), ` +
          `${t.cpu.toFixed(2)} s curl CPU, curl peak RSS ${mib(t.rssKiB * 1024)} MiB; server-side PUT ${put.ms.toFixed(0)} ms; ` +
          `server max RSS ${mib(rss.maxRssKiB * 1024)} MiB (HWM ${mib(rss.hwmKiB * 1024)}), ` +
          `server CPU ${serverCpu.toFixed(2)} s; load ${loadAverage()}`,
      );
    }
  }

  if (profDir) {
    const agentProfDir = join(profDir, 'agent');
    await mkdir(agentProfDir, { recursive: true });
    console.log('\nprofiling one extra (untimed) agent upload…');
    await timed(
      'guard-agent support-bundle upload (--cpu-prof)',
      [AGENT_BIN, '--config', agentConfig, 'support-bundle', 'upload', BUNDLE],
      timeFile,
      childEnv(`--cpu-prof --cpu-prof-dir=${agentProfDir}`),
    );
    await deleteObjects(dataDir);
  }

  const size = meta.size / MiB;
  const m = {
    oursWall: median(ours.map((r) => r.t.wall)),
    oursPut: median(ours.map((r) => r.put)),
    curlWall: median(anchor.map((r) => r.t.wall)),
    curlPut: median(anchor.map((r) => r.put)),
    agentRss: median(ours.map((r) => r.t.rssKiB)) / 1024,
    agentRssMax: Math.max(...ours.map((r) => r.t.rssKiB)) / 1024,
    serverRss: median(ours.map((r) => r.server.maxRssKiB)) / 1024,
    serverRssMax: Math.max(...ours.map((r) => r.server.maxRssKiB)) / 1024,
    serverHwm: Math.max(...ours.map((r) => r.server.hwmKiB)) / 1024,
    serverRssCurl: median(anchor.map((r) => r.server.maxRssKiB)) / 1024,
    curlRss: median(anchor.map((r) => r.t.rssKiB)) / 1024,
  };
  const oursMiBs = size / m.oursWall;
  const oursPutMiBs = size / m.oursPut;
  const curlMiBs = size / m.curlWall;
  const curlPutMiBs = size / m.curlPut;
  const ratio = oursMiBs / curlMiBs;
  // Like with like: our PUT's server-side time against curl's PUT's server-side time (the
  // whole command against curl's wall time).
  const putRatio = oursPutMiBs / curlPutMiBs;

  console.log('');
  console.log(
    table(
      ['median of 3', 'MiB/s', 'ratio to curl (same measure)', 'client peak RSS MiB', 'server max RSS MiB'],
      [
        [
          'ours: whole upload command',
          oursMiBs.toFixed(0),
          ratio.toFixed(2),
          m.agentRss.toFixed(1),
          m.serverRss.toFixed(1),
        ],
        ['ours: PUT phase (server-side time)', oursPutMiBs.toFixed(0), putRatio.toFixed(2), '-', '-'],
        ['curl -T (wall)', curlMiBs.toFixed(0), '1.00', m.curlRss.toFixed(1), m.serverRssCurl.toFixed(1)],
        ['curl PUT (server-side time)', curlPutMiBs.toFixed(0), '1.00', '-', '-'],
      ],
    ),
  );
  const ph = (f: (r: OursRun) => number) => median(ours.map(f));
  console.log(
    `\nwhere the agent's ${m.oursWall.toFixed(2)} s go (medians; server-side phases from its request log):\n` +
      table(
        ['phase', 's', 'share'],
        [
          ['node startup + local check (verify members, hash file)', ph((r) => r.local)],
          ['presign (server)', ph((r) => r.presign)],
          ['PUT (server: receive, hash, write, fsync, rename)', ph((r) => r.put)],
          ['register (server: re-reads and re-hashes the object)', ph((r) => r.register)],
          ['other (gaps, response handling, exit)', ph((r) => r.rest)],
        ].map(([label, s]) => [
          label as string,
          (s as number).toFixed(2),
          `${(((s as number) / m.oursWall) * 100).toFixed(0)}%`,
        ]),
      ) +
      `\nagent startup alone (guard-agent --version): ${(median(startup) * 1000).toFixed(0)} ms; ` +
      `agent CPU per upload ${median(ours.map((r) => r.t.cpu)).toFixed(2)} s: local check ${ph((r) => r.agentCpuLocal).toFixed(2)} s, ` +
      `presign..exit ${ph((r) => r.t.cpu - r.agentCpuLocal).toFixed(2)} s (curl: ${median(anchor.map((r) => r.t.cpu)).toFixed(2)} s); ` +
      `server CPU per upload: ours ${median(ours.map((r) => r.serverCpu)).toFixed(2)} s, ` +
      `curl ${median(anchor.map((r) => r.serverCpu)).toFixed(2)} s`,
  );
  const rssMed = (f: (r: OursRun) => number) => (median(ours.map(f)) / 1024).toFixed(1);
  console.log(
    `\nRSS by phase (medians, MiB; polled every ${POLL_MS} ms):\n` +
      table(
        ['process', 'baseline', 'local check', 'PUT', 'register', 'peak'],
        [
          [
            'agent',
            `${median(startupRss).toFixed(1)} (--version)`,
            rssMed((r) => r.agentRssLocalKiB),
            rssMed((r) => r.agentRssNetKiB),
            '(with PUT)',
            `${m.agentRss.toFixed(1)} (GNU time)`,
          ],
          [
            'server',
            `${serverIdleMiB.toFixed(1)} idle, ${rssMed((r) => r.serverRssBeforeKiB)} before run`,
            '-',
            rssMed((r) => r.serverRssPutKiB),
            rssMed((r) => r.serverRssRegisterKiB),
            m.serverRss.toFixed(1),
          ],
        ],
      ),
  );
  console.log(
    `server during the agent's uploads: max polled VmRSS ${m.serverRssMax.toFixed(1)} MiB over the runs, ` +
      `max VmHWM ${m.serverHwm.toFixed(1)} MiB (reset with clear_refs before each run); ` +
      `agent peak RSS max ${m.agentRssMax.toFixed(1)} MiB; load average now ${loadAverage()} on ${os.availableParallelism()} CPUs ` +
      '(wall times are only comparable on an otherwise idle machine)',
  );
  console.log(
    `the server's analysis of each registered bundle (insights; waited for after each upload, outside every timed ` +
      `window): median ${(median(analyses.map((a) => a.ms)) / 1000).toFixed(2)} s, server max polled VmRSS meanwhile ` +
      `${mib(Math.max(...analyses.map((a) => a.maxRssKiB)) * 1024)} MiB`,
  );

  const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
  console.log('');
  console.log(
    table(
      ['goal', 'measured', 'result'],
      [
        [
          `throughput ours/curl ≥ ${GOAL_RATIO} (whole command)`,
          `${ratio.toFixed(2)} (${oursMiBs.toFixed(0)} vs ${curlMiBs.toFixed(0)} MiB/s)`,
          verdict(ratio >= GOAL_RATIO),
        ],
        [
          `  (PUT phase alone / curl's PUT, server-side times, ≥ ${GOAL_RATIO}, for reference)`,
          `${putRatio.toFixed(2)} (${oursPutMiBs.toFixed(0)} vs ${curlPutMiBs.toFixed(0)} MiB/s)`,
          verdict(putRatio >= GOAL_RATIO),
        ],
        [
          `agent peak RSS ≤ ${GOAL_AGENT_RSS_MIB} MiB`,
          `${m.agentRss.toFixed(1)} MiB (max ${m.agentRssMax.toFixed(1)})`,
          verdict(m.agentRssMax <= GOAL_AGENT_RSS_MIB),
        ],
        [
          `server peak RSS ≤ ${GOAL_SERVER_RSS_MIB} MiB`,
          `${m.serverRss.toFixed(1)} MiB (max ${m.serverRssMax.toFixed(1)})`,
          verdict(m.serverRssMax <= GOAL_SERVER_RSS_MIB),
        ],
      ],
      2,
    ),
  );

  if (profDir) {
    await srv.stop(); // writes the server's profile
    console.log(`\nagent CPU profile (one upload), top self time:\n${await profileSummary(join(profDir, 'agent'))}`);
    console.log(`\nserver CPU profile (whole run), top self time:\n${await profileSummary(join(profDir, 'server'))}`);
  }
} finally {
  await server?.stop();
  await rm(runDir, { recursive: true, force: true });
}
