// Scale-out benchmark: `npm run bench:scale [-- --signals N --rate R --seconds S]`.
// In one run, beside each other, the same workload on:
//   (1) SQLite, one guard-server (the embedded default);
//   (2) PostgreSQL, one replica;
//   (3) PostgreSQL, two replicas sharing the database (signals round-robin over both).
// PostgreSQL is a throw-away cluster (packages/server/test/postgres-cluster.ts) with its
// durable defaults (fsync on, synchronous_commit on: every commit waits for its WAL flush,
// which is more than SQLite's synchronous=NORMAL in WAL mode waits for).
//
// Per setup: (a) sustained deliveries/s: N signals POSTed as fast as the API takes them (32
// in flight), one HTTPS endpoint; rate = N / (first POST → N-th receipt). CPU per delivery:
// guard-server processes + PostgreSQL processes, from /proc (what sizes a bigger machine:
// cores ≈ rate × CPU per delivery). (b) latency at R signals/s paced for S seconds: receipt −
// the moment before the POST, p50/p99/max, and the worst second (the highest p99 of any one
// second's signals). For SQLite also (c): the same latency run beside a CPU-burning neighbour
// process (one busy loop: the machine is not idle), which is where the tail used to grow.
//
// The receiver is a child process (receipt times from CLOCK_MONOTONIC, comparable across
// processes). Prints load averages at start and end: wall-clock rates mean little on a
// shared machine; CPU per delivery moves much less. Exits 0 whatever the goals say.

import { type ChildProcess, fork, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type PgCluster, startPgCluster } from '../packages/server/test/postgres-cluster.ts';
import {
  ApiClient,
  createTestPki,
  freePort,
  type GuardProcess,
  guardSetup,
  postSignalsPaced,
  type Receipt,
  runPool,
  signalBody,
  sleep,
  spawnGuard,
  startReceiver,
  type TestPki,
  usNow,
} from './lib-tls.ts';

const SELF = fileURLToPath(import.meta.url);
const INGEST_CONCURRENCY = 32;
const GOAL_PG_RATIO = 0.7;
const GOAL_SQLITE_PER_S = 3000;
const GOAL_P99_MS = 100;

// ---------------------------------------------------------------------------------------
// Receiver child

type ToReceiver = { type: 'start'; certPem: string; keyPem: string } | { type: 'reset' } | { type: 'dump' };
type FromReceiver =
  | { type: 'ready'; port: number }
  | { type: 'reset' }
  | { type: 'dump'; signalIds: string[]; receivedUs: number[] }
  | { type: 'count'; count: number; lastUs: number };

async function receiverMain(): Promise<void> {
  let ids: string[] = [];
  let times: number[] = [];
  let reported = 0;
  process.on('message', async (m: ToReceiver) => {
    if (m.type === 'start') {
      const r = await startReceiver({
        pki: { certPem: m.certPem, keyPem: m.keyPem },
        onReceipt: (x: Receipt) => {
          ids.push(x.signalId);
          times.push(Number(x.receivedNs / 1000n));
        },
      });
      process.send?.({ type: 'ready', port: r.port } satisfies FromReceiver);
      setInterval(() => {
        if (ids.length !== reported) {
          reported = ids.length;
          process.send?.({ type: 'count', count: ids.length, lastUs: times[times.length - 1] } satisfies FromReceiver);
        }
      }, 5).unref();
    } else if (m.type === 'reset') {
      ids = [];
      times = [];
      reported = 0;
      process.send?.({ type: 'reset' } satisfies FromReceiver);
    } else if (m.type === 'dump')
      process.send?.({ type: 'dump', signalIds: ids, receivedUs: times } satisfies FromReceiver);
  });
  process.on('disconnect', () => process.exit(0));
}

class ReceiverHandle {
  readonly child: ChildProcess = fork(SELF, ['--receiver'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  port = 0;
  count = 0;
  lastUs = 0;
  constructor() {
    this.child.on('message', (m: FromReceiver) => {
      if (m.type === 'count') {
        this.count = m.count;
        this.lastUs = m.lastUs;
      }
    });
  }
  private ask<T extends FromReceiver['type']>(m: ToReceiver, type: T): Promise<Extract<FromReceiver, { type: T }>> {
    return new Promise((resolve) => {
      const on = (r: FromReceiver) => {
        if (r.type !== type) return;
        this.child.off('message', on);
        resolve(r as Extract<FromReceiver, { type: T }>);
      };
      this.child.on('message', on);
      this.child.send(m);
    });
  }
  async start(pki: TestPki) {
    this.port = (await this.ask({ type: 'start', certPem: pki.certPem, keyPem: pki.keyPem }, 'ready')).port;
  }
  async reset() {
    await this.ask({ type: 'reset' }, 'reset');
    this.count = 0;
  }
  async waitFor(n: number, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.count < n) {
      if (Date.now() > deadline) throw new Error(`only ${this.count} of ${n} deliveries arrived in ${timeoutMs} ms`);
      await sleep(5);
    }
    return this.lastUs;
  }
  dump() {
    return this.ask({ type: 'dump' }, 'dump');
  }
  stop() {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
  }
}

// ---------------------------------------------------------------------------------------
// Measurements

const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '–';

function cpuMs(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      total += ((Number(f[11]) + Number(f[12])) * 1000) / 100;
    } catch {
      // gone
    }
  }
  return total;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

interface Setup {
  name: string;
  /** The PostgreSQL database's URL (undefined on SQLite). */
  database: string | undefined;
  replicas: GuardProcess[];
  clients: ApiClient[];
  agentKey: string;
  /** Processes whose CPU is the system's (guard-server replicas, PostgreSQL). */
  systemPids(): number[];
  stop(): Promise<void>;
}

async function startSetup(
  name: string,
  dir: string,
  pki: TestPki,
  receiver: ReceiverHandle,
  options: { cluster?: PgCluster; replicas: number },
): Promise<Setup> {
  const base = join(dir, name.replace(/\W+/g, '-'));
  const dataDirs = Array.from({ length: options.replicas }, (_, i) => join(base, `replica-${i}`));
  const masterKey = `${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}\n`;
  for (const d of dataDirs) {
    await mkdir(d, { recursive: true, mode: 0o700 });
    await writeFile(join(d, 'master.key'), masterKey, { mode: 0o600 });
  }
  const database = options.cluster ? ['--database', await options.cluster.createDatabase('bench')] : [];
  const setup = guardSetup(dataDirs[0], database);
  const replicas: GuardProcess[] = [];
  for (const d of dataDirs)
    replicas.push(
      await spawnGuard({
        dataDir: d,
        port: await freePort(),
        caPath: pki.caPath,
        args: [...database, '--metrics-listen', ''],
        // BENCH_SERVER_PROF=DIR: a CPU profile of each replica there (--cpu-prof), as in bench/webhooks.ts.
        nodeOptions: process.env.BENCH_SERVER_PROF
          ? `--cpu-prof --cpu-prof-dir=${process.env.BENCH_SERVER_PROF}`
          : undefined,
      }),
    );
  const clients = replicas.map((r) => new ApiClient(r.url, 128));
  const agent = await clients[0].must('/v1/agents/enroll', undefined, { token: setup.enroll_token, hostname: 'b-1' });
  await clients[0].must('/v1/webhooks/endpoints', setup.admin_token, {
    name: 'bench receiver',
    url: `https://127.0.0.1:${receiver.port}/hook`,
  });
  return {
    name,
    database: database[1],
    replicas,
    clients,
    agentKey: agent.api_key,
    systemPids: () => [...replicas.map((r) => r.pid), ...(options.cluster?.pids() ?? [])],
    async stop() {
      for (const c of clients) await c.close();
      for (const r of replicas) await r.stop('SIGTERM');
    },
  };
}

interface Sustained {
  perS: number;
  systemCpuUs: number;
  serverCpuUs: number;
  ingestPerS: number;
}

async function sustained(s: Setup, receiver: ReceiverHandle, n: number): Promise<Sustained> {
  await receiver.reset();
  const serverPids = s.replicas.map((r) => r.pid);
  const sys0 = cpuMs(s.systemPids());
  const srv0 = cpuMs(serverPids);
  const t0 = usNow();
  let failed = 0;
  await runPool(n, INGEST_CONCURRENCY, async (i) => {
    const r = await s.clients[i % s.clients.length].post('/v1/signals', s.agentKey, signalBody(i));
    if (r.status !== 201) failed++;
  });
  if (failed > 0) throw new Error(`${failed} POST /v1/signals failed`);
  const ingestUs = usNow() - t0;
  const lastUs = await receiver.waitFor(n, 600_000);
  const sys = cpuMs(s.systemPids()) - sys0;
  const srv = cpuMs(serverPids) - srv0;
  return {
    perS: n / ((lastUs - t0) / 1e6),
    systemCpuUs: (sys * 1000) / n,
    serverCpuUs: (srv * 1000) / n,
    ingestPerS: n / (ingestUs / 1e6),
  };
}

interface Latency {
  p50: number;
  p99: number;
  max: number;
  /** The second (from the start) whose signals had the highest p99, with that p99 and max. */
  worst: { second: number; p99: number; max: number };
  achieved: number;
}

async function latency(s: Setup, receiver: ReceiverHandle, rate: number, seconds: number): Promise<Latency> {
  await receiver.reset();
  const total = Math.round(rate * seconds);
  const { sentUs, ids, t0, pacedS } = await postSignalsPaced(total, rate, (k) =>
    s.clients[k % s.clients.length].post('/v1/signals', s.agentKey, signalBody(k)),
  );
  await receiver.waitFor(total, 120_000);
  const dump = await receiver.dump();
  const at = new Map<string, number>();
  dump.signalIds.forEach((id, j) => {
    if (!at.has(id)) at.set(id, dump.receivedUs[j]);
  });
  const all: number[] = [];
  const bySecond = new Map<number, number[]>();
  for (let k = 0; k < total; k++) {
    const r = at.get(ids[k]);
    if (r === undefined) throw new Error(`signal ${ids[k]} was never delivered`);
    const ms = (r - sentUs[k]) / 1000;
    all.push(ms);
    const sec = Math.floor((sentUs[k] - t0) / 1e6);
    const list = bySecond.get(sec) ?? [];
    list.push(ms);
    bySecond.set(sec, list);
  }
  all.sort((a, b) => a - b);
  let worst = { second: 0, p99: 0, max: 0 };
  for (const [second, list] of bySecond) {
    list.sort((a, b) => a - b);
    const p99 = percentile(list, 99);
    if (p99 > worst.p99) worst = { second, p99, max: list[list.length - 1] };
  }
  return {
    p50: percentile(all, 50),
    p99: percentile(all, 99),
    max: all[all.length - 1],
    worst,
    achieved: total / pacedS,
  };
}

/** The statements that took PostgreSQL's time during a setup's runs (pg_stat_statements). */
async function printStatementStats(cluster: PgCluster, databaseUrl: string | undefined): Promise<void> {
  if (!databaseUrl) return;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('create extension if not exists pg_stat_statements');
    const { rows } = await client.query(`
      select calls, round(total_exec_time::numeric, 1) as exec_ms, round(total_plan_time::numeric, 1) as plan_ms,
        rows, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 90) as query
      from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
      order by total_exec_time + total_plan_time desc limit 12`);
    console.log('  PostgreSQL time by statement (calls, exec ms, plan ms, rows, statement):');
    for (const r of rows) console.log(`    ${r.calls}\t${r.exec_ms}\t${r.plan_ms}\t${r.rows}\t${r.query}`);
    await client.query('select pg_stat_statements_reset()');
  } finally {
    await client.end();
  }
  void cluster;
}

/** A neighbour that burns one core: a busy loop in its own process. */
function cpuBurner(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      signals: { type: 'string', default: '20000' },
      rate: { type: 'string', default: '500' },
      seconds: { type: 'string', default: '10' },
      /** Only these setups (comma-separated: sqlite, pg1, pg2). */
      only: { type: 'string', default: 'sqlite,pg1,pg2' },
      /** Print PostgreSQL's top statements by time (pg_stat_statements) after each PostgreSQL setup. */
      'pg-stats': { type: 'boolean', default: false },
    },
  });
  const only = new Set(String(values.only).split(','));
  const pgStats = values['pg-stats'] === true;
  const n = Number(values.signals);
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  console.log('Scale-out benchmark: SQLite single node, PostgreSQL one and two replicas');
  console.log(
    `machine: ${os.availableParallelism()} CPUs, ${os.cpus()[0]?.model ?? '?'}; node ${process.version}; load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-bench-scale-'));
  const receiver = new ReceiverHandle();
  let cluster: PgCluster | undefined;
  let burner: ChildProcess | undefined;
  const setups: Setup[] = [];
  const cleanup = () => {
    receiver.stop();
    burner?.kill('SIGKILL');
    for (const s of setups) for (const r of s.replicas) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  };
  process.on('exit', cleanup);
  try {
    const pki = await createTestPki(dir);
    await receiver.start(pki);
    cluster = await startPgCluster({
      durable: true,
      label: 'bench',
      settings: pgStats ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } : {},
    });
    const results: { name: string; a: Sustained; b: Latency; c?: Latency }[] = [];
    for (const [key, name, replicas, pg] of [
      ['sqlite', 'SQLite, 1 node', 1, false],
      ['pg1', 'PostgreSQL, 1 replica', 1, true],
      ['pg2', 'PostgreSQL, 2 replicas', 2, true],
    ] as const) {
      if (!only.has(key)) continue;
      console.log(`${name}: starting …`);
      const s = await startSetup(name, dir, pki, receiver, { cluster: pg ? cluster : undefined, replicas });
      setups.push(s);
      await sustained(s, receiver, 1000); // warm-up: JIT, connections, caches
      console.log(`${name}: (a) sustained, ${fmt(n)} signals …`);
      const a = await sustained(s, receiver, n);
      console.log(`${name}: (b) latency at ${rate}/s for ${seconds} s …`);
      const b = await latency(s, receiver, rate, seconds);
      let c: Latency | undefined;
      if (!pg) {
        console.log(`${name}: (c) latency at ${rate}/s beside a CPU-burning neighbour …`);
        burner = cpuBurner();
        await sleep(500);
        c = await latency(s, receiver, rate, seconds);
        burner.kill('SIGKILL');
        burner = undefined;
      }
      if (pg && pgStats && cluster) await printStatementStats(cluster, s.database);
      await s.stop();
      results.push({ name, a, b, c });
    }
    const load1 = os.loadavg();
    const sqlite = results.find((r) => r.name.startsWith('SQLite'))?.a.perS ?? Number.NaN;
    const rows: string[][] = [
      [
        'setup',
        'deliveries/s',
        '× SQLite',
        'CPU µs/delivery (server + PostgreSQL)',
        'server only',
        'p50',
        'p99',
        'max',
        'worst second p99 / max',
      ],
    ];
    const latencyCells = (l: Latency) => [
      `${l.p50.toFixed(1)} ms`,
      `${l.p99.toFixed(1)} ms`,
      `${l.max.toFixed(1)} ms`,
      `${l.worst.p99.toFixed(1)} / ${l.worst.max.toFixed(1)} ms (s ${l.worst.second})`,
    ];
    for (const r of results) {
      rows.push([
        r.name,
        fmt(r.a.perS),
        `${(r.a.perS / sqlite).toFixed(2)}×`,
        fmt(r.a.systemCpuUs),
        fmt(r.a.serverCpuUs),
        ...latencyCells(r.b),
      ]);
      if (r.c) rows.push([`${r.name}, CPU-burning neighbour`, '', '', '', '', ...latencyCells(r.c)]);
    }
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
    console.log('');
    console.log(line(rows[0]));
    console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
    for (const r of rows.slice(1)) console.log(line(r));
    console.log('');
    const pg1 = results.find((r) => r.name === 'PostgreSQL, 1 replica') ?? results[0];
    const goals: [string, boolean][] = [
      [`SQLite ≥ ${fmt(GOAL_SQLITE_PER_S)} deliveries/s sustained`, sqlite >= GOAL_SQLITE_PER_S],
      [`PostgreSQL 1 replica ≥ ${GOAL_PG_RATIO}× SQLite`, pg1.a.perS >= GOAL_PG_RATIO * sqlite],
      ...results.map((r): [string, boolean] => [
        `${r.name}: p99 ≤ ${GOAL_P99_MS} ms at ${rate}/s`,
        r.b.p99 <= GOAL_P99_MS,
      ]),
      [
        `SQLite beside a CPU-burning neighbour: p99 ≤ ${GOAL_P99_MS} ms at ${rate}/s`,
        (results[0].c?.p99 ?? Number.POSITIVE_INFINITY) <= GOAL_P99_MS,
      ],
    ];
    for (const [goal, ok] of goals) console.log(`${ok ? 'PASS' : 'MISS'}  ${goal}`);
    for (const r of results)
      console.log(
        `${r.name}: ingest ${fmt(r.a.ingestPerS)} signals/s; latency run achieved ${fmt(r.b.achieved, 1)}/s${
          r.c ? ` (beside the neighbour ${fmt(r.c.achieved, 1)}/s)` : ''
        }`,
      );
    console.log(
      `Sizing: a core delivers about 1e6 / (CPU µs per delivery) deliveries/s: SQLite ${fmt(1e6 / results[0].a.systemCpuUs)}/s, PostgreSQL ${fmt(1e6 / pg1.a.systemCpuUs)}/s per core of server + database.`,
    );
    console.log(`load average at end: ${load1.map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    cleanup();
    process.off('exit', cleanup);
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--receiver') await receiverMain();
else {
  try {
    await main();
  } catch (error) {
    console.error(`bench/scale.ts failed: ${(error as Error).stack ?? error}`);
    process.exitCode = 1;
  }
}
