// `npm run bench`: times the real `guard-agent support-bundle collect` against a native
// baseline built from Debian tools, on a synthetic but realistic agent home, and prints a
// report (DESIGN §9 has the machine facts this is read against).
//
//   1. Builds once, cached under bench/.work/ (gitignored): an agent home of ~178 MiB on disk
//      (agent.log ~60 MiB + gzip -6 rotated segments agent.log.<N>.gz, N = 1 newest; slog text
//      with ~5% JSON lines, a dozen secrets in agent.log and a few in two segments only), and
//      a second home whose agent.log is 1 GiB (same segments, hard-linked).
//   2. Times collect (the binary, as operators run it) and the baseline
//        for f in segments: gzip -dc f | grep -cE '<keys>[="]'; grep -cE '<keys>[="]' agent.log;
//        tar -cf - agent.log segments | zstd -3 -q -o out.tar.zst
//      alternately, REPS times each, under GNU time (`%e %M %U %S`: wall s, peak RSS KiB of
//      the largest process of the tree, CPU s); reports medians. A second, info-only baseline
//      also rewrites the members with a hit (sed, gzip -6), as collect does. CPU seconds and the
//      CPU other processes used meanwhile are printed: wall times mean little on a busy machine.
//      `collect --obfuscate` is timed in the same rotation (REPS times, median) and reported
//      beside the plain figure, as a ratio to the same baseline (info: no goal of its own; it
//      rewrites every segment, so the baseline+redact row is the closer comparison).
//   3. Runs collect once on the 1 GiB home: its peak RSS must match the 180 MiB one.
//   4. Prints the table and the goals with PASS/MISS. Exits 0 whatever the goals say; non-zero
//      only when a command fails.
//   `--scenarios=obfuscate,baseline` (and `--reps=N`) runs only some, see SCENARIOS below.
//
// The on-disk total is kept just under the 180 MiB cap so that collect takes every member
// and both sides archive the same files (checked against the manifest below).

import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createGzip } from 'node:zlib';
import { verifyBundle } from '../packages/agent/src/bundle/index.ts';

const MiB = 1024 * 1024;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'packages/agent/bin/guard-agent');
const WORK = join(ROOT, 'bench/.work');
const HOME_180 = join(WORK, 'home-180m');
const HOME_1G = join(WORK, 'home-1g');
const OUT = join(WORK, 'out');
const GNU_TIME = '/usr/bin/time';
const NPROC = os.availableParallelism();

/** Bump when the generated data changes: a cache with another version is rebuilt. */
const DATA_VERSION = 5;
const AGENT_LOG_BYTES = 60 * MiB;
/** Uncompressed size at which the (simulated) logrotate rotated each segment. */
const SEGMENT_TEXT_BYTES = 64 * MiB;
/** agent.log + segments on disk: under the 180 MiB cap with room for the small members. */
const ON_DISK_TARGET = 178 * MiB;
const BIG_LOG_BYTES = 1024 * MiB;
/** Segments that carry secrets; every other segment is clean (copied byte for byte). */
const DIRTY_SEGMENTS = [2, 5];
const GZIP_LEVEL = 6;

/**
 * `node bench/collect.ts [--scenarios=a,b,…] [--reps=N]`: by default every scenario, REPS = 3.
 * plain: collect; obfuscate: collect --obfuscate; baseline: the native scan; redact: the native
 * baseline that rewrites the members with a hit; rewrite: the native baseline that rewrites
 * every member (sed + gzip -6, what --obfuscate must do; info); 1g: collect on the 1 GiB home.
 * With fewer than all, a short table of the medians is printed instead of the full report.
 */
const SCENARIOS = ['plain', 'obfuscate', 'baseline', 'redact', 'rewrite', '1g'] as const;
type Scenario = (typeof SCENARIOS)[number];
const { values: cli } = parseArgs({ options: { scenarios: { type: 'string' }, reps: { type: 'string' } } });
const chosen = new Set((cli.scenarios ?? SCENARIOS.join(',')).split(',').filter((s) => s !== ''));
for (const s of chosen)
  if (!(SCENARIOS as readonly string[]).includes(s))
    throw new Error(`--scenarios: unknown scenario ${s} (known: ${SCENARIOS.join(', ')})`);
const want = (s: Scenario) => chosen.has(s);
const REPS = cli.reps === undefined ? 3 : Number(cli.reps);
if (!Number.isInteger(REPS) || REPS < 1) throw new Error('--reps: a whole number ≥ 1');

const GOAL_RATIO = 1.5;
const GOAL_RSS_MIB = 128;
/** "≈": the 1 GiB run's peak RSS within this fraction of the 180 MiB median. */
const RSS_TOLERANCE = 0.1;

// ---------------------------------------------------------------------------------------
// Synthetic log text

/** mulberry32: small, fast, seeded: the same data on every machine. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Gen {
  readonly rand: () => number;
  constructor(seed: number) {
    this.rand = prng(seed);
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.rand() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rand() * items.length)];
  }
  chars(alphabet: string, n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.rand() * alphabet.length)];
    return s;
  }
  hex(n: number): string {
    return this.chars('0123456789abcdef', n);
  }
  ulid(): string {
    return `01J${this.chars('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 23)}`;
  }
  ip(): string {
    return this.rand() < 0.7
      ? `10.${this.int(0, 3)}.${this.int(0, 40)}.${this.int(2, 254)}`
      : `${this.int(11, 223)}.${this.int(0, 255)}.${this.int(0, 255)}.${this.int(1, 254)}`;
  }
}

const HOST = 'web-07.eu-west.prod';
const HOST_IP = '10.2.14.37';
const AGENT_ID = 'a_7f3c29d1';
const USERS = ['root', 'deploy', 'www-data', 'postgres', 'nginx', 'alice', 'bob', 'ci-runner', 'backup'];
const COMMS = ['bash', 'sh', 'curl', 'python3', 'node', 'nginx', 'postgres', 'sshd', 'cron', 'git', 'tar', 'systemctl'];
const ARGVS = [
  '/usr/bin/curl -fsS https://api.internal/healthz',
  '/bin/sh -c /usr/local/bin/backup.sh --incremental',
  '/usr/bin/python3 /opt/app/manage.py migrate --noinput',
  '/usr/bin/git fetch --prune origin',
  'nginx: worker process',
  '/usr/sbin/sshd -D -R',
  '/usr/bin/tar -czf /var/backups/etc.tgz /etc',
  '/usr/bin/systemctl is-active nginx.service',
];
const PATHS = [
  '/etc/passwd',
  '/etc/shadow',
  '/etc/nginx/nginx.conf',
  '/etc/ssh/sshd_config',
  '/usr/local/bin/backup.sh',
];
const API_PATHS = ['config', 'heartbeat', 'signals', 'policies', 'bundles/register'];
const PROBES = ['execsnoop', 'tcpconnect', 'filemon', 'dnssnoop'];
const ERRORS = [
  'permission denied',
  'context deadline exceeded',
  'connection reset by peer',
  'map update failed: no space left on device',
];

/** One line without its timestamp: `json` lines get `{"time":"…",` in front, text lines `time=… `. */
interface PoolLine {
  json: boolean;
  rest: string;
}

/**
 * Values that recur in a real log (a binary's hash, a file's few versions, a user's key): drawn
 * once, so the text compresses as a real agent log does; request and trace ids stay random.
 */
interface Vocabulary {
  execHash: string[];
  containers: string[];
  fileDigests: string[][];
  fingerprints: string[];
  progTags: string[];
  policies: string[];
}

function vocabulary(g: Gen): Vocabulary {
  const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  return {
    execHash: ARGVS.map(() => g.hex(64)),
    containers: ['-', '-', '-', g.hex(12), g.hex(12), g.hex(12)],
    fileDigests: PATHS.map(() => [g.hex(64), g.hex(64), g.hex(64)]),
    fingerprints: USERS.map(() => g.chars(b64, 43)),
    progTags: PROBES.map(() => g.hex(16)),
    policies: Array.from({ length: 24 }, () => `pol_${g.hex(8)}`),
  };
}

function randomLine(g: Gen, v: Vocabulary): PoolLine {
  const r = g.rand() * 100;
  const pid = g.int(300, 65000);
  const probe = g.int(0, PROBES.length - 1);
  if (r < 5) {
    // ~5% JSON lines (structured events logged by the probes)
    if (g.rand() < 0.5)
      return {
        json: true,
        rest: `"level":"INFO","msg":"probe attached","probe":{"name":"${PROBES[probe]}","pid":${pid},"maps":${g.int(3, 40)},"prog_tag":"${v.progTags[probe]}"},"host":"${HOST}","trace_id":"${g.hex(32)}"}`,
      };
    return {
      json: true,
      rest: `"level":"DEBUG","msg":"policy evaluated","policy":{"id":"${g.pick(v.policies)}","rules":[${g.int(1, 90)},${g.int(1, 90)},${g.int(1, 90)}],"verdict":"${g.rand() < 0.9 ? 'allow' : 'deny'}"},"event":{"pid":${pid},"comm":"${g.pick(COMMS)}","user":"${g.pick(USERS)}","cgroup":"/system.slice/${g.pick(COMMS)}.service"},"span_id":"${g.hex(16)}"}`,
    };
  }
  if (r < 27)
    return {
      json: false,
      rest: `level=DEBUG msg="http request" method=${g.pick(['GET', 'GET', 'POST', 'PUT'])} url=https://guard.example.com/v1/agents/${AGENT_ID}/${g.pick(API_PATHS)} status=${g.pick([200, 200, 200, 204, 304, 429, 503])} dur_ms=${(g.rand() * 400).toFixed(2)} bytes=${g.int(80, 90000)} req_id=${g.ulid()} trace_id=${g.hex(32)}`,
    };
  const exe = g.int(0, ARGVS.length - 1);
  const file = g.int(0, PATHS.length - 1);
  const user = g.int(0, USERS.length - 1);
  if (r < 45)
    return {
      json: false,
      rest: `level=INFO msg="exec observed" probe=execsnoop pid=${pid} ppid=${g.int(1, 3000)} uid=${g.int(0, 1001)} user=${g.pick(USERS)} comm=${g.pick(COMMS)} argv="${ARGVS[exe]}" sha256=${v.execHash[exe]} container_id=${g.pick(v.containers)}`,
    };
  if (r < 63)
    return {
      json: false,
      rest: `level=DEBUG msg="tcp connect" probe=tcpconnect pid=${pid} comm=${g.pick(COMMS)} src=${HOST_IP}:${g.int(32768, 60999)} dst=${g.ip()}:${g.pick([443, 443, 80, 5432, 6379, 22])} bytes_out=${g.int(0, 200000)} rtt_us=${g.int(80, 90000)} span_id=${g.hex(16)}`,
    };
  if (r < 73)
    return {
      json: false,
      rest: `level=INFO msg="heartbeat" host=${HOST} ip=${HOST_IP} uptime_s=${g.int(1000, 9000000)} goroutines=${g.int(20, 90)} rss_mb=${g.int(30, 80)} events_per_s=${(g.rand() * 900).toFixed(1)}`,
    };
  if (r < 81)
    return {
      json: false,
      rest: `level=INFO msg="file changed" probe=filemon path=${PATHS[file]} inode=${g.int(100000, 9999999)} user=${g.pick(USERS)} digest=sha256:${g.pick(v.fileDigests[file])} prev_digest=sha256:${g.pick(v.fileDigests[file])}`,
    };
  if (r < 84)
    return {
      json: false,
      rest: `level=INFO msg="ssh login" user=${USERS[user]} ip=${g.ip()} port=${g.int(1024, 65535)} method=publickey fingerprint=SHA256:${v.fingerprints[user]} session=${g.hex(32)}`,
    };
  if (r < 90)
    return {
      json: false,
      rest: `level=INFO msg="dns query" probe=dnssnoop pid=${pid} comm=${g.pick(COMMS)} qname=${g.pick(['api', 'db', 'cache', 'cdn', 'auth'])}-${g.int(1, 40)}.internal.example.com qtype=${g.pick(['A', 'AAAA', 'SRV'])} rcode=NOERROR answers=${g.int(0, 4)}`,
    };
  if (r < 95)
    return {
      json: false,
      rest: `level=WARN msg="upload retry" attempt=${g.int(1, 6)} backoff_ms=${g.int(100, 30000)} err="dial tcp ${g.ip()}:443: i/o timeout" req_id=${g.ulid()}`,
    };
  if (r < 97.5)
    return {
      json: false,
      rest: `level=ERROR msg="probe error" probe=${g.pick(PROBES)} pid=${pid} err="${g.pick(ERRORS)}" retry_in_s=${g.int(1, 60)}`,
    };
  if (r < 98)
    // Contains a hint substring (`_token`, `api_key`) but no key that must be masked.
    return {
      json: false,
      rest: `level=INFO msg="access_token refreshed" access_token_ttl_s=3600 token_type=bearer api_key_id=kid_${g.hex(8)} req_id=${g.ulid()}`,
    };
  return {
    json: false,
    rest: `level=DEBUG msg="ring buffer stats" probe=${g.pick(PROBES)} lost=${g.int(0, 20)} read=${g.int(1000, 900000)} pages=64 cpu=${g.int(0, 1)}`,
  };
}

/** The secrets planted: one masked value per line, in slog text, dotted groups and JSON. */
function secretLine(g: Gen, i: number): PoolLine {
  switch (i % 5) {
    case 0:
      return {
        json: false,
        rest: `level=INFO msg="enrolled with service" base_url=https://guard.example.com api_key=gk_live_${g.hex(32)} agent_id=${AGENT_ID}`,
      };
    case 1:
      return {
        json: false,
        rest: `level=WARN msg="upload retry" req.client_secret="cs ${g.hex(20)} with spaces" attempt=2 host=${HOST}`,
      };
    case 2:
      return {
        json: true,
        rest: `"level":"INFO","msg":"token refreshed","auth":{"refresh_token":"rt_${g.hex(40)}","expires_in":3600},"host":"${HOST}"}`,
      };
    case 3:
      return {
        json: false,
        rest: `level=DEBUG msg="enrolment request" enroll_token=et_${g.hex(24)} url=https://guard.example.com/v1/enroll`,
      };
    default:
      return {
        json: false,
        rest: `level=DEBUG msg="upstream auth" upstream.access_token=${g.hex(48)} probe=tcpconnect`,
      };
  }
}

const POOL_LINES = 40_000;

function buildPool(): PoolLine[] {
  const g = new Gen(0x5eed);
  const v = vocabulary(g);
  return Array.from({ length: POOL_LINES }, () => randomLine(g, v));
}

interface TextPlan {
  /** Uncompressed bytes to write (the last line may run past it). */
  bytes: number;
  /** ms since epoch of the first line; lines are ~50 ms apart. */
  startMs: number;
  secrets: number;
  seed: number;
  /** Checked every chunk: true ends the text early (the compressed budget is reached). */
  stop?: () => boolean;
}

const MEAN_GAP_MS = 50;
const CHUNK_TEXT_BYTES = MiB;

/** Yields ~1 MiB chunks of log text: pool lines (from a random offset) with fresh timestamps. */
async function* logText(pool: PoolLine[], plan: TextPlan): AsyncGenerator<Buffer> {
  const g = new Gen(plan.seed);
  const secretAt = Array.from({ length: plan.secrets }, (_, i) => Math.floor((plan.bytes * (i + 0.5)) / plan.secrets));
  let nextSecret = 0;
  let written = 0;
  let t = Math.floor(plan.startMs);
  let second = -1;
  let stamp = '';
  let p = g.int(0, pool.length - 1);
  while (written < plan.bytes && !plan.stop?.()) {
    const parts: string[] = [];
    let size = 0;
    while (size < CHUNK_TEXT_BYTES && written + size < plan.bytes) {
      t += Math.floor(g.rand() * 2 * MEAN_GAP_MS);
      const s = Math.floor(t / 1000);
      if (s !== second) {
        second = s;
        stamp = new Date(s * 1000).toISOString().slice(0, 19);
      }
      const ts = `${stamp}.${String(t % 1000).padStart(3, '0')}Z`;
      let line: PoolLine;
      if (nextSecret < secretAt.length && written + size >= secretAt[nextSecret]) {
        line = secretLine(g, nextSecret);
        nextSecret++;
      } else {
        line = pool[p];
        p = p + 1 === pool.length ? 0 : p + 1;
      }
      const text = line.json ? `{"time":"${ts}",${line.rest}\n` : `time=${ts} ${line.rest}\n`;
      parts.push(text);
      size += text.length;
    }
    written += size;
    yield Buffer.from(parts.join(''), 'latin1');
  }
}

class ByteCounter extends Transform {
  bytes = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    done(null, chunk);
  }
}

// ---------------------------------------------------------------------------------------
// The cached data set

interface DataSet {
  version: number;
  segments: string[];
  files: Record<string, number>;
}

async function sizeOrUndefined(path: string): Promise<number | undefined> {
  return stat(path).then(
    (s) => s.size,
    () => undefined,
  );
}

async function cached(home: string): Promise<DataSet | undefined> {
  try {
    const data = JSON.parse(await readFile(join(home, 'dataset.json'), 'utf8')) as DataSet;
    if (data.version !== DATA_VERSION) return undefined;
    for (const [name, size] of Object.entries(data.files))
      if ((await sizeOrUndefined(join(home, 'log', name))) !== size) return undefined;
    return data;
  } catch {
    return undefined;
  }
}

async function prepareHome(home: string): Promise<void> {
  await rm(home, { recursive: true, force: true });
  await mkdir(join(home, 'log'), { recursive: true });
  await mkdir(join(home, 'state'), { recursive: true });
  await writeFile(
    join(home, 'agent.yaml'),
    [
      '# guard-agent benchmark home (generated by bench/collect.ts)',
      'log_path: log/agent.log',
      'state_dir: state',
      'environment: bench',
      'tenant_id: t_bench_0001',
      'api_key: gk_live_bench_not_a_secret',
      '',
    ].join('\n'),
  );
}

async function finishHome(home: string, segments: string[]): Promise<DataSet> {
  const files: Record<string, number> = {};
  for (const name of ['agent.log', ...segments]) files[name] = (await stat(join(home, 'log', name))).size;
  const data: DataSet = { version: DATA_VERSION, segments, files };
  await writeFile(join(home, 'dataset.json'), `${JSON.stringify(data, null, 2)}\n`);
  return data;
}

async function writePlainLog(pool: PoolLine[], path: string, plan: TextPlan): Promise<void> {
  await pipeline(Readable.from(logText(pool, plan)), createWriteStream(path, { highWaterMark: MiB }));
}

/** The ~178 MiB home: agent.log plus gzip -6 segments, newest first, until the on-disk target. */
async function build180(pool: PoolLine[]): Promise<DataSet> {
  await prepareHome(HOME_180);
  const log = join(HOME_180, 'log');
  const spanMs = (bytes: number) => (bytes / 230) * MEAN_GAP_MS; // ~230-byte lines
  const end = Date.now();
  let start = end - spanMs(AGENT_LOG_BYTES);
  await writePlainLog(pool, join(log, 'agent.log'), { bytes: AGENT_LOG_BYTES, startMs: start, secrets: 12, seed: 1 });
  let remaining = ON_DISK_TARGET - AGENT_LOG_BYTES;
  const segments: string[] = [];
  for (let n = 1; remaining > MiB; n++) {
    start -= spanMs(SEGMENT_TEXT_BYTES);
    const name = `agent.log.${n}.gz`;
    const counter = new ByteCounter();
    const budget = remaining;
    await pipeline(
      Readable.from(
        logText(pool, {
          bytes: SEGMENT_TEXT_BYTES,
          startMs: start,
          secrets: DIRTY_SEGMENTS.includes(n) ? 6 : 0,
          seed: 100 + n,
          // ~1 MiB of text in flight compresses to ~0.3 MiB: stop early enough to stay in budget.
          stop: () => counter.bytes > budget - 0.5 * MiB,
        }),
      ),
      createGzip({ level: GZIP_LEVEL, chunkSize: MiB }),
      counter,
      createWriteStream(join(log, name)),
    );
    segments.push(name);
    remaining -= counter.bytes;
    process.stdout.write(`  ${name}: ${mib(counter.bytes)} MiB\n`);
  }
  return finishHome(HOME_180, segments);
}

/** The 1 GiB home: a 1 GiB agent.log and the same segments (hard links, no extra disk). */
async function build1g(pool: PoolLine[], small: DataSet): Promise<DataSet> {
  await prepareHome(HOME_1G);
  const log = join(HOME_1G, 'log');
  const start = Date.now() - (BIG_LOG_BYTES / 230) * MEAN_GAP_MS;
  await writePlainLog(pool, join(log, 'agent.log'), { bytes: BIG_LOG_BYTES, startMs: start, secrets: 12, seed: 2 });
  for (const name of small.segments) {
    const from = join(HOME_180, 'log', name);
    const to = join(log, name);
    await link(from, to).catch(() => pipeline(createReadStream(from), createWriteStream(to)));
  }
  return finishHome(HOME_1G, small.segments);
}

async function dataSets(): Promise<{ small: DataSet; big: DataSet }> {
  let pool: PoolLine[] | undefined;
  let small = await cached(HOME_180);
  if (!small) {
    console.log(`generating ${HOME_180} (cached for later runs)…`);
    const t0 = performance.now();
    pool ??= buildPool();
    small = await build180(pool);
    console.log(`  done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await rm(HOME_1G, { recursive: true, force: true }); // its segments are links to the old ones
  }
  let big = await cached(HOME_1G);
  if (!big) {
    console.log(`generating ${HOME_1G} (cached for later runs)…`);
    const t0 = performance.now();
    pool ??= buildPool();
    big = await build1g(pool, small);
    console.log(`  done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  return { small, big };
}

// ---------------------------------------------------------------------------------------
// Measuring

interface Measure {
  wall: number;
  rssKiB: number;
  /** user + system CPU seconds of the whole tree: robust when other work shares the cores. */
  cpu: number;
  /** CPU seconds the rest of the machine used meanwhile (/proc/stat busy time minus ours). */
  otherCpu: number;
  stdout: string;
}

/** Runs argv under GNU time; throws (with its stderr) when the command fails. */
function timed(label: string, argv: string[]): Measure {
  const timeFile = join(OUT, 'time.txt');
  const busyBefore = machineBusySeconds();
  const run = spawnSync(GNU_TIME, ['-f', '%e %M %U %S', '-o', timeFile, ...argv], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * MiB,
  });
  const busy = machineBusySeconds() - busyBefore;
  if (run.error) throw new Error(`${label}: cannot run ${GNU_TIME}: ${run.error.message}`);
  if (run.status !== 0)
    throw new Error(`${label} failed (exit ${run.status ?? run.signal}):\n${run.stderr.trim()}\n${run.stdout.trim()}`);
  const lines = readFileSync(timeFile, 'utf8').trim().split('\n');
  const [wall, rss, user, sys] = (lines.at(-1) ?? '').split(' ').map(Number);
  if (![wall, rss, user, sys].every(Number.isFinite)) throw new Error(`${label}: cannot parse GNU time output`);
  const cpu = user + sys;
  return { wall, rssKiB: rss, cpu, otherCpu: Math.max(0, busy - cpu), stdout: run.stdout };
}

/** Busy CPU seconds of the whole machine since boot, from /proc/stat (USER_HZ = 100 on Linux). */
function machineBusySeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, _idle, _iowait, irq, softirq, steal] = fields;
  return (user + nice + system + irq + softirq + steal) / 100;
}

function collectArgv(home: string, out: string, extra: string[] = []): string[] {
  return [BIN, '--config', join(home, 'agent.yaml'), 'support-bundle', 'collect', '--out', out, ...extra];
}

// The native baseline, in two modes:
//   scan    as briefed: gzip -dc | grep -c every segment, grep -c agent.log, tar | zstd -3 of
//           the originals. Scans all that collect scans, but rewrites nothing: the goal's yardstick.
//   rewrite as redact, but every member is rewritten (sed, gzip -6 for a segment), hit or not:
//           the compression work collect --obfuscate cannot avoid, done by native tools. Info.
//   redact  the same, plus what collect also does for a member with a hit: sed it into a work
//           dir (re-gzipped at -6 for a segment) and archive that copy. Equivalent work; info only.
// LC_ALL=C: byte matching, as the agent's latin1 scanner does (and grep's fast path). grep
// exits 1 when it counts 0 lines, so only > 1 is a failure; PIPESTATUS keeps a gzip failure
// from hiding behind grep's status. stdout: "<member> <lines with a hit>" per member.
const BASELINE_SCRIPT = `
set -euo pipefail
export LC_ALL=C
mode=$1 dir=$2 work=$3 out=$4
shift 4
pat='(api_key|enroll_token|[A-Za-z0-9_.-]*_token|[A-Za-z0-9_.-]*_secret)[="]'
mask='s/((api_key|enroll_token|[A-Za-z0-9_.-]*_token|[A-Za-z0-9_.-]*_secret)(=|"[[:blank:]]*:[[:blank:]]*))("[^"]*"|[^ ,}"]*)/\\1"[REDACTED]"/g'
rm -rf "$work"; mkdir -p "$work"
fresh=() kept=()
hits() { # status check of "source | grep -c" or "grep -c": grep's 1 means no line matched
  if [ "$1" -ne 0 ] || [ "$2" -gt 1 ]; then echo "baseline: scanning $3 failed ($1 $2)" >&2; exit 1; fi
  n=$(<"$work/count"); echo "$3 $n"
}
for f in "$@"; do
  set +e
  gzip -dc -- "$dir/$f" | grep -cE -- "$pat" >"$work/count"
  st=("\${PIPESTATUS[@]}")
  set -e
  hits "\${st[0]}" "\${st[1]}" "$f"
  if { [ "$mode" = redact ] && [ "$n" -gt 0 ]; } || [ "$mode" = rewrite ]; then
    gzip -dc -- "$dir/$f" | sed -E "$mask" | gzip -6 >"$work/$f"
    fresh+=("$f")
  else
    kept+=("$f")
  fi
done
set +e
grep -cE -- "$pat" "$dir/agent.log" >"$work/count"
s=$?
set -e
hits 0 "$s" agent.log
if { [ "$mode" = redact ] && [ "$n" -gt 0 ]; } || [ "$mode" = rewrite ]; then
  sed -E "$mask" "$dir/agent.log" >"$work/agent.log"
  fresh=(agent.log "\${fresh[@]}")
else
  kept=(agent.log "\${kept[@]}")
fi
members=()
if [ \${#fresh[@]} -gt 0 ]; then members+=(-C "$work" "\${fresh[@]}"); fi
if [ \${#kept[@]} -gt 0 ]; then members+=(-C "$dir" "\${kept[@]}"); fi
tar -cf - "\${members[@]}" | zstd -3 -q -o "$out"
rm -rf "$work"
`;

type BaselineMode = 'scan' | 'redact' | 'rewrite';

function baselineArgv(mode: BaselineMode, home: string, segments: string[], out: string): string[] {
  const work = join(OUT, `baseline-work-${mode}`);
  return ['bash', '-c', BASELINE_SCRIPT, 'baseline', mode, join(home, 'log'), work, out, ...segments];
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function mib(bytes: number): string {
  return (bytes / MiB).toFixed(1);
}

function version(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? `${r.stdout}${r.stderr}`.split('\n')[0].trim() : `${cmd}: not available`;
}

/** Reads every input once so that no timed run pays for a cold page cache. */
async function warm(home: string, data: DataSet): Promise<void> {
  for (const name of Object.keys(data.files)) {
    for await (const _ of createReadStream(join(home, 'log', name), { highWaterMark: 4 * MiB })) {
      // discard
    }
  }
}

function table(head: string[], rows: string[][], leftCols = 1): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < leftCols ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------

if (spawnSync(GNU_TIME, ['-f', '%e', 'true']).status !== 0)
  throw new Error(`${GNU_TIME} (GNU time) is missing: run scripts/install-test-deps.sh (Debian package "time")`);
for (const tool of ['bash', 'gzip', 'grep', 'tar', 'zstd'])
  if (spawnSync(tool, ['--version']).status !== 0)
    throw new Error(`${tool} is missing: run scripts/install-test-deps.sh`);

const { small, big } = await dataSets();
await rm(OUT, { recursive: true, force: true });
await mkdir(OUT, { recursive: true });

const smallDisk = Object.values(small.files).reduce((a, b) => a + b, 0);
const bigDisk = Object.values(big.files).reduce((a, b) => a + b, 0);
console.log('\nguard-agent support-bundle collect benchmark');
console.log(
  `machine: nproc=${NPROC}, ${os.cpus()[0]?.model ?? 'unknown cpu'}, ${mib(os.totalmem())} MiB RAM, ` +
    `node ${process.version} (${process.execPath}), load average ${loadAverage()}`,
);
console.log(
  `tools: ${version('zstd', ['--version'])}; ${version('gzip', ['--version'])}; ${version('grep', ['--version'])}; ${version('tar', ['--version'])}`,
);
console.log(
  `data: ${HOME_180}: agent.log ${mib(small.files['agent.log'])} MiB + ${small.segments.length} segments ` +
    `${mib(smallDisk - small.files['agent.log'])} MiB = ${mib(smallDisk)} MiB on disk; ` +
    `secrets in agent.log and ${DIRTY_SEGMENTS.map((n) => `agent.log.${n}.gz`).join(', ')}`,
);
console.log(
  `      ${HOME_1G}: agent.log ${mib(big.files['agent.log'])} MiB + the same segments = ${mib(bigDisk)} MiB on disk`,
);

await warm(HOME_180, small);

const ours: Measure[] = [];
const oursObf: Measure[] = [];
let oursObfBundleBytes = 0;
const base: Measure[] = [];
const baseRedact: Measure[] = [];
let oursBundleBytes = 0;
let baseBundleBytes = 0;
let baseRedactBundleBytes = 0;
let baseHits = '';
const baseRewrite: Measure[] = [];
console.log(
  `\nrunning ${REPS} repetitions of each (${[...chosen].filter((s) => s !== '1g').join(', ')}), alternately…`,
);
for (let rep = 1; rep <= REPS; rep++) {
  const line: string[] = [];
  const show = (label: string, m: Measure) =>
    line.push(
      `${label} ${m.wall.toFixed(2)} s wall, ${m.cpu.toFixed(2)} s CPU, ${mib(m.rssKiB * 1024)} MiB (others ${m.otherCpu.toFixed(1)} s CPU)`,
    );
  if (want('plain')) {
    const out = join(OUT, `ours-${rep}.tar.zst`);
    const o = timed('guard-agent support-bundle collect', collectArgv(HOME_180, out));
    ours.push(o);
    oursBundleBytes = (await stat(out)).size;
    if (rep === 1) {
      const manifest = await verifyBundle(out);
      const taken = manifest.contents.map((m) => m.name);
      const missing = ['agent.log', ...small.segments].filter((n) => !taken.includes(n));
      console.log(
        `  collect bundle verified: ${manifest.contents.length} members, ${manifest.redaction.values_masked} values masked ` +
          `(${Object.entries(manifest.redaction.members)
            .filter(([, n]) => n > 0)
            .map(([m, n]) => `${m}: ${n}`)
            .join(', ')}), trimmed: ${manifest.trimmed_segments.join(', ') || 'none'}`,
      );
      if (missing.length > 0)
        console.log(`  WARNING: collect left out ${missing.join(', ')}: the two sides do not archive the same files`);
    }
    await rm(out, { force: true });
    show('ours', o);
  }

  if (want('obfuscate')) {
    const oout = join(OUT, `ours-obf-${rep}.tar.zst`);
    const ob = timed('guard-agent support-bundle collect --obfuscate', collectArgv(HOME_180, oout, ['--obfuscate']));
    oursObf.push(ob);
    oursObfBundleBytes = (await stat(oout)).size;
    if (rep === 1) {
      const manifest = await verifyBundle(oout);
      const map = JSON.parse(await readFile(`${oout}.map.json`, 'utf8')) as Record<string, string>;
      const byKind = new Map<string, number>();
      for (const token of Object.keys(map)) {
        const kind = token.slice(0, token.lastIndexOf('-'));
        byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
      }
      console.log(
        `  collect --obfuscate bundle verified: ${manifest.contents.length} members, ` +
          `${manifest.obfuscation?.values} distinct values obfuscated (${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')}), ` +
          `trimmed: ${manifest.trimmed_segments.join(', ') || 'none'}`,
      );
    }
    await rm(oout, { force: true });
    await rm(`${oout}.map.json`, { force: true });
    show('ours --obfuscate', ob);
  }

  /** One run of the baseline script in `mode`: timed, its bundle's size kept, the bundle removed. */
  const baseline = async (mode: BaselineMode, label: string, into: Measure[]) => {
    const out = join(OUT, `baseline-${mode}-${rep}.tar.zst`);
    const m = timed(`baseline (${mode})`, baselineArgv(mode, HOME_180, small.segments, out));
    into.push(m);
    const bytes = (await stat(out)).size;
    await rm(out, { force: true });
    show(label, m);
    return { m, bytes };
  };
  if (want('baseline')) {
    const b = await baseline('scan', 'baseline', base);
    baseBundleBytes = b.bytes;
    baseHits = b.m.stdout
      .trim()
      .split('\n')
      .filter((l) => !l.endsWith(' 0'))
      .join(', ');
  }
  if (want('redact')) baseRedactBundleBytes = (await baseline('redact', 'baseline+redact', baseRedact)).bytes;
  if (want('rewrite')) await baseline('rewrite', 'baseline+rewrite', baseRewrite);
  console.log(`  rep ${rep}: ${line.join('; ')}`);
}

if (!SCENARIOS.every(want)) {
  // Some scenarios only: the medians, side by side, and the ratios to the baseline.
  const rows: [string, Measure[]][] = [
    ['ours', ours],
    ['ours --obfuscate', oursObf],
    ['baseline', base],
    ['baseline+redact', baseRedact],
    ['baseline+rewrite (info)', baseRewrite],
  ];
  const measured = rows.filter(([, ms]) => ms.length > 0);
  const bw = base.length > 0 ? median(base.map((m) => m.wall)) : undefined;
  const bc = base.length > 0 ? median(base.map((m) => m.cpu)) : undefined;
  console.log('');
  console.log(
    table(
      ['scenario', 'wall s', 'CPU s', 'peak RSS MiB', 'wall ratio', 'CPU ratio'],
      measured.map(([label, ms]) => {
        const w = median(ms.map((m) => m.wall));
        const c = median(ms.map((m) => m.cpu));
        return [
          `${label} (median of ${ms.length})`,
          w.toFixed(2),
          c.toFixed(2),
          (median(ms.map((m) => m.rssKiB)) / 1024).toFixed(1),
          bw ? (w / bw).toFixed(2) : '-',
          bc ? (c / bc).toFixed(2) : '-',
        ];
      }),
    ),
  );
  const all = measured.flatMap(([, ms]) => ms);
  const share = all.reduce((sum, m) => sum + m.otherCpu, 0) / all.reduce((sum, m) => sum + m.wall * NPROC, 0);
  console.log(
    `other processes used ${(share * 100).toFixed(0)}% of the machine's CPU time during the timed runs ` +
      `(load average now ${loadAverage()} on ${NPROC} CPUs)`,
  );
  await rm(OUT, { recursive: true, force: true });
  process.exit(0);
}

console.log(`  baseline lines with a key hit: ${baseHits || 'none'}`);

console.log('\nrunning collect once on the 1 GiB agent.log home…');
await warm(HOME_1G, big);
const bigOut = join(OUT, 'ours-1g.tar.zst');
const g = timed('guard-agent support-bundle collect (1 GiB agent.log)', collectArgv(HOME_1G, bigOut));
const bigBundleBytes = (await stat(bigOut)).size;
const bigManifest = await verifyBundle(bigOut);
await rm(OUT, { recursive: true, force: true }); // the last bundle and GNU time's scratch file
const bigLogStored = bigManifest.contents.find((m) => m.name === 'agent.log')?.size ?? 0;
console.log(
  `  bundle verified: agent.log kept its newest ${mib(bigLogStored)} MiB (cap), ` +
    `${bigManifest.trimmed_segments.length} of ${big.segments.length} segments trimmed (each still scanned first)`,
);
console.log(
  `  1 GiB: ${g.wall.toFixed(2)} s wall, ${g.cpu.toFixed(2)} s CPU, ${mib(g.rssKiB * 1024)} MiB (bundle ${mib(bigBundleBytes)} MiB)`,
);

const oursWall = median(ours.map((m) => m.wall));
const baseWall = median(base.map((m) => m.wall));
const oursRss = median(ours.map((m) => m.rssKiB)) / 1024;
const baseRss = median(base.map((m) => m.rssKiB)) / 1024;
const bigRss = g.rssKiB / 1024;
const ratio = oursWall / baseWall;
const redactWall = median(baseRedact.map((m) => m.wall));
const redactRss = median(baseRedact.map((m) => m.rssKiB)) / 1024;
const obfWall = median(oursObf.map((m) => m.wall));
const obfRss = median(oursObf.map((m) => m.rssKiB)) / 1024;

console.log('');
console.log(
  table(
    ['scenario', 'ours wall s', 'baseline wall s', 'ratio', 'ours peak RSS MiB', 'baseline peak RSS MiB'],
    [
      [
        `${mib(smallDisk)} MiB home (median of ${REPS})`,
        oursWall.toFixed(2),
        baseWall.toFixed(2),
        ratio.toFixed(2),
        oursRss.toFixed(1),
        baseRss.toFixed(1),
      ],
      [
        '  same, baseline+redact (info)',
        oursWall.toFixed(2),
        redactWall.toFixed(2),
        (oursWall / redactWall).toFixed(2),
        oursRss.toFixed(1),
        redactRss.toFixed(1),
      ],
      [
        '  same, ours --obfuscate (info)',
        obfWall.toFixed(2),
        baseWall.toFixed(2),
        (obfWall / baseWall).toFixed(2),
        obfRss.toFixed(1),
        baseRss.toFixed(1),
      ],
      [
        '  same, ours --obfuscate vs baseline+redact (info)',
        obfWall.toFixed(2),
        redactWall.toFixed(2),
        (obfWall / redactWall).toFixed(2),
        obfRss.toFixed(1),
        redactRss.toFixed(1),
      ],
      [
        '  same, ours --obfuscate vs baseline+rewrite of every member (info)',
        obfWall.toFixed(2),
        median(baseRewrite.map((m) => m.wall)).toFixed(2),
        (obfWall / median(baseRewrite.map((m) => m.wall))).toFixed(2),
        obfRss.toFixed(1),
        (median(baseRewrite.map((m) => m.rssKiB)) / 1024).toFixed(1),
      ],
      ['1 GiB agent.log home (1 run)', g.wall.toFixed(2), '-', '-', bigRss.toFixed(1), '-'],
    ],
  ),
);
const oursCpu = median(ours.map((m) => m.cpu));
const baseCpu = median(base.map((m) => m.cpu));
const redactCpu = median(baseRedact.map((m) => m.cpu));
const obfCpu = median(oursObf.map((m) => m.cpu));
console.log(
  `\nCPU s (user+sys, median): ours ${oursCpu.toFixed(2)}, baseline ${baseCpu.toFixed(2)} ` +
    `(ratio ${(oursCpu / baseCpu).toFixed(2)}), baseline+redact ${redactCpu.toFixed(2)} (ratio ${(oursCpu / redactCpu).toFixed(2)}); ` +
    `ours --obfuscate ${obfCpu.toFixed(2)} (ratio to baseline ${(obfCpu / baseCpu).toFixed(2)}, to ours ${(obfCpu / oursCpu).toFixed(2)}); ` +
    `baseline+rewrite ${median(baseRewrite.map((m) => m.cpu)).toFixed(2)}`,
);
const all = [...ours, ...oursObf, ...base, ...baseRedact, ...baseRewrite, g];
const otherShare = all.reduce((sum, m) => sum + m.otherCpu, 0) / all.reduce((sum, m) => sum + m.wall * NPROC, 0);
console.log(
  `other processes used ${(otherShare * 100).toFixed(0)}% of the machine's CPU time during the timed runs ` +
    `(load average now ${loadAverage()} on ${NPROC} CPUs)`,
);
if (otherShare > 0.1)
  console.log(
    'WARNING: the machine was busy with other work: wall times and the wall ratio are inflated and noisy; ' +
      'the CPU seconds above are the steadier comparison. Rerun on an idle machine to judge the wall goal.',
  );
console.log(
  `bundle size: ours ${mib(oursBundleBytes)} MiB, baseline ${mib(baseBundleBytes)} MiB ` +
    `(${((oursBundleBytes / baseBundleBytes - 1) * 100).toFixed(1)}%), baseline+redact ${mib(baseRedactBundleBytes)} MiB, ` +
    `ours --obfuscate ${mib(oursObfBundleBytes)} MiB; ` +
    `1 GiB home: ${mib(bigBundleBytes)} MiB`,
);

const diff = bigRss - oursRss;
const maxRss = Math.max(oursRss, bigRss);
const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
console.log('');
console.log(
  table(
    ['goal', 'measured', 'result'],
    [
      [`wall ratio ours/baseline ≤ ${GOAL_RATIO}`, ratio.toFixed(2), verdict(ratio <= GOAL_RATIO)],
      [
        `(info) wall ratio ours --obfuscate/baseline, against ${GOAL_RATIO}`,
        (obfWall / baseWall).toFixed(2),
        verdict(obfWall / baseWall <= GOAL_RATIO),
      ],
      [`peak RSS --obfuscate ≤ ${GOAL_RSS_MIB} MiB`, `${obfRss.toFixed(1)} MiB (180)`, verdict(obfRss <= GOAL_RSS_MIB)],
      [
        `peak RSS ≤ ${GOAL_RSS_MIB} MiB`,
        `${oursRss.toFixed(1)} MiB (180), ${bigRss.toFixed(1)} MiB (1 GiB)`,
        verdict(maxRss <= GOAL_RSS_MIB),
      ],
      [
        `RSS(1 GiB log) ≈ RSS(180 MiB), ±${RSS_TOLERANCE * 100}%`,
        `${bigRss.toFixed(1)} vs ${oursRss.toFixed(1)} MiB: ${diff >= 0 ? '+' : ''}${diff.toFixed(1)} MiB (${diff >= 0 ? '+' : ''}${((diff / oursRss) * 100).toFixed(1)}%)`,
        verdict(Math.abs(diff) <= RSS_TOLERANCE * oursRss),
      ],
    ],
    2,
  ),
);
