// Peer benchmark (issue 25): `npm run bench:peers [-- --signals N --rate R --seconds S --runs K
// --only a,b]`. What a Node team would build instead of Guard is a webhook sender on a job
// queue; this measures, on this machine and in one run, the same workload through:
//
//   guard-sqlite    the real bin/guard-server on SQLite (a child process), one HTTPS endpoint;
//   guard-postgres  the same on PostgreSQL (a throw-away cluster, fsync on);
//   graphile-worker | pg-boss | bullmq   minimal webhook senders on each library
//                   (bench/peers/peer.ts, a child process each): node:http ingest that
//                   validates the same signal JSON and enqueues a job; a worker that builds the
//                   same envelope, signs it with the same HMAC and POSTs it with undici, retried
//                   by the library; graphile-worker and pg-boss on the same PostgreSQL cluster,
//                   BullMQ on Debian's redis-server (bench/peers/redis.ts, fetched, not installed);
//   memory          the same ingest and worker as the peers on an array in the process (no
//                   library, nothing stored): the floor of any Node sender with an HTTP ingest;
//   raw             undici signed POSTs straight to the receiver (no queue, no persistence).
//
// Per system and run: (a) deliveries/s: N signals POSTed to the system's ingest as fast as it
// takes them (32 in flight; the raw loop: 16), time from the first POST to the N-th distinct
// receipt; for Guard also (f) the same N signals POSTed as JSON arrays of 100 (each with its
// idempotency_key), 4 in flight; (b) latency: signals POSTed paced at R/s for S seconds,
// receipt − the moment before the POST, p50/p99; CPU per delivery in (a) and (f): user + system
// time of the system's processes — its server or worker child and every process of its
// database (the PostgreSQL cluster's process tree: the postmaster and its backends, with the
// time of backends that exited; redis-server and its snapshot children) — before and after,
// over N. Every system gets a warm-up of 500 signals (not measured) after its start; each is
// started fresh in every run (its own data dir, database or Redis dir) and stopped after.
// Systems run alternately (A B C … A B C …, `--runs`, default 2); the 1-minute load average is
// printed beside each figure. Failures (refused POSTs, deliveries that never came, duplicates)
// are counted and printed, never hidden. The receiver is one child process for all (lib-receiver.ts).

import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Pool } from 'undici';
import { type PgCluster, postgresBinDir, startPgCluster } from '../packages/server/test/postgres-cluster.ts';
import { fmt, load1, percentile, ReceiverProcess, table, treeCpuMs } from './lib-receiver.ts';
import {
  ApiClient,
  createTestPki,
  freePort,
  guardSetup,
  type JsonResult,
  postSignalsPaced,
  ROOT,
  runPool,
  signalBody,
  signedPost,
  sleep,
  spawnGuard,
  type TestPki,
  usNow,
} from './lib-tls.ts';
import type { PeerConfig, PeerSystem } from './peers/peer.ts';
import { peerTuning } from './peers/peer.ts';
import { type RedisBinary, type RedisProcess, redisBinary, startRedis } from './peers/redis.ts';

const PEER_FILE = join(fileURLToPath(new URL('.', import.meta.url)), 'peers', 'peer.ts');
const INGEST_CONCURRENCY = 32;
/** Deliveries in flight: Guard's default per-endpoint concurrency; the peers and the raw loop get the same. */
const IN_FLIGHT = 16;
const BATCH = 100;
const BATCHES_IN_FLIGHT = 4;
const WARM_UP = 500;

const SYSTEMS = ['guard-sqlite', 'guard-postgres', 'graphile-worker', 'pg-boss', 'bullmq', 'memory', 'raw'] as const;
type SystemName = (typeof SYSTEMS)[number];
const LABEL: Record<SystemName, string> = {
  'guard-sqlite': 'Guard on SQLite',
  'guard-postgres': 'Guard on PostgreSQL',
  'graphile-worker': 'graphile-worker (tuned)',
  'pg-boss': 'pg-boss (tuned)',
  bullmq: 'BullMQ on Redis (defaults)',
  memory: 'in-memory queue (stores nothing)',
  raw: 'raw undici signed-POST loop',
};

/** A system while it runs: how to send it signal k, and whose CPU is its. */
interface Running {
  post(k: number): Promise<JsonResult>;
  /** Signals k … k + count − 1 as one batch (Guard only). */
  postBatch?(k: number, count: number, run: string): Promise<number>;
  /** CPU ms so far of the system's processes (with its database's). */
  cpuMs(): number;
  ingestConcurrency: number;
  /** Counters the system keeps of its own (the peers' failed attempts). */
  stats?(): Promise<Record<string, number>>;
  /** Its database in the PostgreSQL cluster, whose statements are counted (pg_stat_statements). */
  database?: string;
  stop(): Promise<void>;
}

interface StatementCount {
  calls: number;
  /** Execution time (pg_stat_statements' total_exec_time), ms; per delivery: µs. */
  execMs: number;
}

interface Shared {
  dir: string;
  pki: TestPki;
  receiver: ReceiverProcess;
  cluster?: PgCluster;
  /** Statements run so far in a database of the cluster (pg_stat_statements, every statement its client sent). */
  statements?: (database: string) => Promise<number>;
  /** With --statements: the calls and execution ms so far of each statement text in a database of the cluster. */
  statementKinds?: (database: string) => Promise<Map<string, StatementCount>>;
  redis?: RedisBinary;
}

// ---------------------------------------------------------------------------------------
// The systems

async function startGuardSystem(s: Shared, name: SystemName, run: number): Promise<Running> {
  const dataDir = join(s.dir, `${name}-${run}`);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const cluster = name === 'guard-postgres' ? s.cluster : undefined;
  const databaseUrl = cluster ? await cluster.createDatabase('guard') : undefined;
  const database = databaseUrl ? ['--database', databaseUrl] : [];
  const setup = guardSetup(dataDir, database);
  const server = await spawnGuard({
    dataDir,
    port: await freePort(),
    caPath: s.pki.caPath,
    args: [...database, '--metrics-listen', ''],
    // BENCH_SERVER_BIN=FILE: another build of guard-server (a modified copy), for A/B runs.
    bin: process.env.BENCH_SERVER_BIN || undefined,
  });
  const api = new ApiClient(server.url, 128);
  const agent = await api.must('/v1/agents/enroll', undefined, { token: setup.enroll_token, hostname: 'bench-1' });
  await api.must('/v1/webhooks/endpoints', setup.admin_token, {
    name: 'bench receiver',
    url: `https://127.0.0.1:${s.receiver.port}/hook`,
  });
  const key = agent.api_key as string;
  return {
    post: (k) => api.post('/v1/signals', key, signalBody(k)),
    async postBatch(k, count, run) {
      const items = [];
      for (let i = k; i < k + count; i++) items.push({ ...signalBody(i), idempotency_key: `peers-${run}-${i}` });
      const r = await api.post('/v1/signals', key, items);
      if (r.status !== 200 || !Array.isArray(r.json?.results)) return count;
      return (r.json.results as { status: number }[]).filter((x) => x.status !== 201).length;
    },
    cpuMs: () => treeCpuMs([server.pid, ...(cluster ? cluster.pids().slice(0, 1) : [])]),
    ingestConcurrency: INGEST_CONCURRENCY,
    database: databaseUrl && new URL(databaseUrl).pathname.slice(1),
    async stop() {
      await api.close();
      await server.stop('SIGTERM');
      if (cluster && databaseUrl) await cluster.dropDatabase(databaseUrl);
    },
  };
}

async function startPeerSystem(s: Shared, name: PeerSystem, run: number): Promise<Running> {
  const cluster = name === 'bullmq' || name === 'memory' ? undefined : s.cluster;
  const databaseUrl = cluster ? await cluster.createDatabase(name.replace(/\W/g, '_')) : undefined;
  let redis: RedisProcess | undefined;
  if (name === 'bullmq') {
    if (!s.redis) throw new Error('no redis-server');
    redis = await startRedis(s.redis, join(s.dir, `redis-${run}`));
  }
  const token = `peer-token-${crypto.randomUUID()}`;
  const config: PeerConfig = {
    system: name,
    database: databaseUrl,
    redisPort: redis?.port,
    receiverUrl: `https://127.0.0.1:${s.receiver.port}/hook`,
    caPem: s.pki.caPem,
    secret: 'whsec_peer-secret-0123456789abcdefghijklmnopqrstuvwxyz01',
    token,
    concurrency: IN_FLIGHT,
  };
  const env: NodeJS.ProcessEnv = { ...process.env, PEER_CONFIG: JSON.stringify(config) };
  delete env.NODE_OPTIONS;
  const child: ChildProcess = fork(PEER_FILE, [], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 60 s`)), 60_000);
    child.once('message', (m: { type: string; port: number }) => {
      clearTimeout(timer);
      resolve(m.port);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited at start (code ${code})`));
    });
  });
  const api = new ApiClient(`http://127.0.0.1:${port}`, 128);
  const signalTimesBody = (k: number) => signalBody(k);
  const roots = () => [child.pid ?? 0, ...(cluster ? cluster.pids().slice(0, 1) : []), ...(redis ? [redis.pid] : [])];
  return {
    post: (k) => api.post('/v1/signals', token, signalTimesBody(k)),
    cpuMs: () => treeCpuMs(roots()),
    ingestConcurrency: INGEST_CONCURRENCY,
    database: databaseUrl && new URL(databaseUrl).pathname.slice(1),
    async stats() {
      const r = await api.pool.request({ path: '/stats', method: 'GET' });
      return (await r.body.json()) as Record<string, number>;
    },
    async stop() {
      await api.close();
      const exited = new Promise<void>((r) => {
        if (child.exitCode !== null || child.signalCode !== null) r();
        else child.once('exit', () => r());
      });
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
      await redis?.stop();
      if (cluster && databaseUrl) await cluster.dropDatabase(databaseUrl);
    },
  };
}

/** The anchor: the same envelope signed per request and POSTed straight to the receiver. */
async function startRaw(s: Shared): Promise<Running> {
  const pool = new Pool(`https://127.0.0.1:${s.receiver.port}`, {
    connections: IN_FLIGHT,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: { ca: s.pki.caPem, rejectUnauthorized: true },
  });
  const secret = 'whsec_anchor-secret-0123456789abcdefghijklmnopqrstuvwxyz0';
  return {
    async post(k) {
      const signal = signalBody(k) as Record<string, string | number>;
      const signalId = crypto.randomUUID();
      const sentAt = new Date();
      const body = JSON.stringify({
        event_type: 'signal_created',
        version: 'v1',
        timestamp: sentAt.toISOString(),
        tenant_id: 'bench-tenant',
        data: {
          signal_id: signalId,
          signal_type: signal.signal_type,
          severity: signal.severity,
          description: signal.description,
          server_id: 'bench-agent',
          server_name: 'bench-1',
          identity_id: signal.identity_id,
          identity_name: signal.identity_name,
          environment: 'production',
          created_at: sentAt.toISOString(),
        },
        console_url: `https://guard.example.com/console/signals/${signalId}`,
      });
      const status = await signedPost(pool, '/hook', body, secret, sentAt);
      return { status: status === 200 ? 201 : status, json: { signal_id: signalId } };
    },
    cpuMs() {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    },
    ingestConcurrency: IN_FLIGHT,
    stop: () => pool.destroy(),
  };
}

function startSystem(s: Shared, name: SystemName, run: number): Promise<Running> {
  if (name === 'guard-sqlite' || name === 'guard-postgres') return startGuardSystem(s, name, run);
  if (name === 'raw') return startRaw(s);
  return startPeerSystem(s, name, run);
}

// ---------------------------------------------------------------------------------------
// Measurements

interface Throughput {
  perS: number;
  cpuUs: number;
  load: string;
  refused: number;
  missing: number;
  duplicates: number;
  meanBytes: number;
  /** Signals/s the ingest answered (first POST to the last answer). */
  ingestPerS: number;
  /** PostgreSQL statements per delivery (its database's, each one a round trip); NaN without PostgreSQL. */
  statements: number;
  /** Of cpuUs, the PostgreSQL cluster's processes'; NaN without PostgreSQL. */
  dbCpuUs: number;
  /** With --statements: the most called statements, with their calls and execution µs per delivery. */
  kinds: [statement: string, perDelivery: StatementCount][];
}

const waitMs = (n: number) => 60_000 + n * 10;

/** N signals as fast as the system's ingest takes them (single POSTs, or batches). */
async function throughput(sys: Running, shared: Shared, n: number, batched?: { run: string }): Promise<Throughput> {
  const { receiver } = shared;
  const load = load1();
  await receiver.reset();
  const countStatements = () =>
    sys.database && shared.statements ? shared.statements(sys.database) : Promise.resolve(Number.NaN);
  const statements0 = await countStatements();
  const countKinds = () =>
    sys.database && shared.statementKinds
      ? shared.statementKinds(sys.database)
      : Promise.resolve(new Map<string, StatementCount>());
  const kinds0 = await countKinds();
  const dbCpuMs = () => (sys.database && shared.cluster ? treeCpuMs(shared.cluster.pids().slice(0, 1)) : Number.NaN);
  const db0 = dbCpuMs();
  const cpu0 = sys.cpuMs();
  const t0 = usNow();
  let refused = 0;
  if (batched && sys.postBatch) {
    const post = sys.postBatch;
    await runPool(Math.ceil(n / BATCH), BATCHES_IN_FLIGHT, async (b) => {
      const k = b * BATCH;
      refused += await post(k, Math.min(BATCH, n - k), batched.run).catch(() => Math.min(BATCH, n - k));
    });
  } else {
    await runPool(n, sys.ingestConcurrency, async (k) => {
      const r = await sys.post(k).catch(() => ({ status: 0, json: null }));
      if (r.status !== 201) refused++;
    });
  }
  const ingestUs = usNow() - t0;
  const w = await receiver.waitFor(n - refused, waitMs(n));
  const cpu = sys.cpuMs() - cpu0;
  const db = dbCpuMs() - db0;
  const statements = ((await countStatements()) - statements0) / Math.max(1, w.distinct);
  const kinds = [...(await countKinds())]
    .map(([text, { calls, execMs }]): [string, StatementCount] => {
      const before = kinds0.get(text) ?? { calls: 0, execMs: 0 };
      const n = Math.max(1, w.distinct);
      return [text, { calls: (calls - before.calls) / n, execMs: ((execMs - before.execMs) * 1000) / n }];
    })
    .filter(([, perDelivery]) => perDelivery.calls > 0)
    .sort((x, y) => y[1].calls - x[1].calls)
    .slice(0, 12);
  return {
    kinds,
    statements,
    perS: w.distinct / ((w.lastUs - t0) / 1e6),
    cpuUs: (cpu * 1000) / Math.max(1, w.distinct),
    dbCpuUs: (db * 1000) / Math.max(1, w.distinct),
    load,
    refused,
    missing: n - refused - w.distinct,
    duplicates: w.duplicates,
    meanBytes: w.meanBytes,
    ingestPerS: n / (ingestUs / 1e6),
  };
}

/** --statements: a throughput run's most called statements, per delivery. */
function printKinds(t: Throughput): void {
  for (const [text, { calls, execMs }] of t.kinds)
    console.log(`    ${calls.toFixed(3).padStart(7)} × ${fmt(execMs, 1).padStart(6)} µs  ${text}`);
}

interface Latency {
  p50: number;
  p99: number;
  max: number;
  /** The POSTs' answer times (the ingest's share). */
  answerP50: number;
  answerP99: number;
  achieved: number;
  load: string;
  refused: number;
  missing: number;
}

async function latency(
  sys: Running,
  receiver: ReceiverProcess,
  rate: number,
  seconds: number,
  neighbour = false,
): Promise<Latency> {
  // The neighbour: a process spinning on one core for the whole run (another tenant of the host,
  // a build, a scan), at the same priority as everything else.
  const burner = neighbour ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }) : undefined;
  try {
    if (burner) await sleep(1000);
    return await paced(sys, receiver, rate, seconds);
  } finally {
    burner?.kill('SIGKILL');
  }
}

async function paced(sys: Running, receiver: ReceiverProcess, rate: number, seconds: number): Promise<Latency> {
  const load = load1();
  await receiver.reset();
  const total = Math.round(rate * seconds);
  let refused = 0;
  // How long each POST took to be answered: the ingest's share of the latency.
  const answerMs: number[] = [];
  const { sentUs, ids, pacedS } = await postSignalsPaced(total, rate, (k) => {
    const t0 = usNow();
    return sys.post(k).then(
      (r) => {
        answerMs.push((usNow() - t0) / 1000);
        if (r.status !== 201) refused++;
        // Refusals are counted here; postSignalsPaced sees every answer as a success.
        return { status: 201, json: r.status === 201 ? r.json : { signal_id: '' } };
      },
      () => {
        refused++;
        return { status: 201, json: { signal_id: '' } };
      },
    );
  });
  await receiver.waitFor(total - refused, waitMs(total));
  answerMs.sort((a, b) => a - b);
  const dump = await receiver.dump();
  const at = new Map<string, number>();
  dump.signalIds.forEach((id, j) => {
    at.set(id, dump.receivedUs[j]);
  });
  const ms: number[] = [];
  let missing = 0;
  for (let k = 0; k < total; k++) {
    if (!ids[k]) continue;
    const r = at.get(ids[k]);
    if (r === undefined) missing++;
    else ms.push((r - sentUs[k]) / 1000);
  }
  ms.sort((a, b) => a - b);
  return {
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    max: ms[ms.length - 1],
    answerP50: percentile(answerMs, 50),
    answerP99: percentile(answerMs, 99),
    achieved: total / pacedS,
    load,
    refused,
    missing,
  };
}

interface RunResult {
  a: Throughput;
  f?: Throughput;
  b: Latency;
  /** The same beside a CPU-burning neighbour. */
  n: Latency;
  stats?: Record<string, number>;
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      signals: { type: 'string', default: '10000' },
      rate: { type: 'string', default: '500' },
      seconds: { type: 'string', default: '10' },
      runs: { type: 'string', default: '2' },
      only: { type: 'string', default: SYSTEMS.join(',') },
      // Prints, for each system on PostgreSQL, its most called statements per delivery.
      statements: { type: 'boolean', default: false },
    },
  });
  const n = Number(values.signals);
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const runs = Number(values.runs);
  const only = String(values.only)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const o of only)
    if (!(SYSTEMS as readonly string[]).includes(o))
      throw new Error(`--only: unknown system ${o} (${SYSTEMS.join(', ')})`);
  const selected: SystemName[] = SYSTEMS.filter((x) => only.includes(x));

  console.log('Peer benchmark: Guard beside webhook senders on graphile-worker, pg-boss and BullMQ');
  console.log(
    `machine: ${os.availableParallelism()} CPUs, ${os.cpus()[0]?.model ?? '?'}, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM; ` +
      `node ${process.version}; ${os.type()} ${os.release()}; load average at start: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  console.log(
    `workload: ${fmt(n)} signals per throughput run (${INGEST_CONCURRENCY} POSTs in flight), latency at ${rate}/s for ${seconds} s, ` +
      `${IN_FLIGHT} deliveries in flight per system, ${runs} alternating runs, warm-up ${WARM_UP} signals per start`,
  );

  const dir = await mkdtemp(join(os.tmpdir(), 'guard-bench-peers-'));
  const receiver = new ReceiverProcess();
  const shared: Shared = { dir, pki: await createTestPki(dir), receiver };
  const skipped = new Map<SystemName, string>();
  let closeAdmin: (() => Promise<void>) | undefined;
  const cleanup = () => receiver.stop();
  process.on('exit', cleanup);
  try {
    await receiver.start(shared.pki);
    if (selected.some((x) => x === 'guard-postgres' || x === 'graphile-worker' || x === 'pg-boss')) {
      // pg_stat_statements counts the statements each system's clients send (top level: not
      // those of triggers and foreign-key checks); it costs the cluster a little CPU, the same
      // for every system on it.
      shared.cluster = await startPgCluster({
        durable: true,
        label: 'peers',
        settings: { shared_preload_libraries: 'pg_stat_statements' },
      });
      const admin = new pg.Client({ connectionString: shared.cluster.url() });
      await admin.connect();
      await admin.query('create extension if not exists pg_stat_statements');
      closeAdmin = () => admin.end();
      shared.statements = async (database) =>
        Number(
          (
            await admin.query<{ n: string }>(
              `select coalesce(sum(s.calls), 0) as n from pg_stat_statements s
               join pg_database d on d.oid = s.dbid where d.datname = $1`,
              [database],
            )
          ).rows[0].n,
        );
      if (values.statements)
        shared.statementKinds = async (database) => {
          const { rows } = await admin.query<{ query: string; calls: string; exec_ms: string }>(
            `select s.query, sum(s.calls) as calls, sum(s.total_exec_time) as exec_ms from pg_stat_statements s
             join pg_database d on d.oid = s.dbid where d.datname = $1 group by s.query`,
            [database],
          );
          return new Map(
            rows.map((row) => [
              row.query.replace(/\s+/g, ' ').slice(0, 120),
              { calls: Number(row.calls), execMs: Number(row.exec_ms) },
            ]),
          );
        };
      const version = execFileSync(join(postgresBinDir() ?? '', 'postgres'), ['--version'], {
        encoding: 'utf8',
      }).trim();
      console.log(`${version}: a throw-away cluster, fsync and synchronous_commit on (its defaults)`);
    }
    if (selected.includes('bullmq')) {
      try {
        shared.redis = await redisBinary();
        console.log(
          `Redis: Debian's redis-server ${shared.redis.version} (unpacked in node_modules/.cache/guard-bench-redis, not installed), ` +
            'its defaults: RDB snapshots, no append-only file (no fsync per job)',
        );
      } catch (error) {
        skipped.set('bullmq', `redis-server cannot run here: ${(error as Error).message}`);
        console.log(`BullMQ left out: ${skipped.get('bullmq')}`);
      }
    }
    if (
      selected.some((x) => x === 'graphile-worker' || x === 'pg-boss' || x === 'bullmq') &&
      !existsSync(join(ROOT, 'bench', 'peers', 'node_modules'))
    )
      throw new Error('the peers are not installed: npm ci --prefix bench/peers (npm run bench:peers does it)');
    if (selected.some((x) => x === 'graphile-worker' || x === 'pg-boss' || x === 'bullmq' || x === 'memory')) {
      console.log('tuning:');
      for (const p of ['graphile-worker', 'pg-boss', 'bullmq', 'memory'] as const)
        if (selected.includes(p)) console.log(`  ${p}: ${peerTuning(p, IN_FLIGHT)}`);
      console.log(
        `  Guard: its defaults (per-endpoint concurrency ${IN_FLIGHT}); batched ingest: arrays of ${BATCH}, ${BATCHES_IN_FLIGHT} in flight`,
      );
    }

    const results = new Map<SystemName, RunResult[]>();
    for (let run = 1; run <= runs; run++) {
      for (const name of selected) {
        if (skipped.has(name)) continue;
        console.log(`run ${run}: ${LABEL[name]} — starting (load ${load1()}) …`);
        let sys: Running | undefined;
        try {
          sys = await startSystem(shared, name, run);
          await throughput(sys, shared, WARM_UP, sys.postBatch ? { run: `warm-${run}` } : undefined);
          await throughput(sys, shared, WARM_UP);
          const a = await throughput(sys, shared, n);
          console.log(
            `  deliveries/s ${fmt(a.perS)}, CPU ${fmt(a.perS > 0 ? a.cpuUs : Number.NaN)} µs per delivery${dbShare(a)} (load ${a.load}); ` +
              `ingest answered ${fmt(a.ingestPerS)}/s; mean body ${fmt(a.meanBytes)} bytes${statementsOf(a)}${failures(a)}`,
          );
          printKinds(a);
          let f: Throughput | undefined;
          if (sys.postBatch) {
            f = await throughput(sys, shared, n, { run: String(run) });
            console.log(
              `  batched ingest: deliveries/s ${fmt(f.perS)}, CPU ${fmt(f.cpuUs)} µs${dbShare(f)} (load ${f.load})${statementsOf(f)}${failures(f)}`,
            );
            printKinds(f);
          }
          const b = await latency(sys, receiver, rate, seconds);
          console.log(`  at ${rate}/s ${latencyLine(b)}`);
          const nb = await latency(sys, receiver, rate, seconds, true);
          console.log(`  at ${rate}/s beside a process spinning on one core ${latencyLine(nb)}`);
          const stats = await sys.stats?.();
          if (stats) console.log(`  its own counters: ${JSON.stringify(stats)}`);
          const list = results.get(name) ?? [];
          list.push({ a, f, b, n: nb, stats });
          results.set(name, list);
        } catch (error) {
          console.log(`  FAILED: ${(error as Error).stack ?? error}`);
        } finally {
          await sys?.stop().catch((e) => console.log(`  stopping failed: ${(e as Error).message}`));
        }
      }
    }

    // -------------------------------------------------------------------------------------
    const bull = results.get('bullmq');
    const each = (list: RunResult[], pick: (r: RunResult) => string) => list.map(pick).join(' · ');
    const ratio = (list: RunResult[], value: (r: RunResult) => number | undefined) =>
      bull
        ? list
            .map((r, i) => {
              const v = value(r);
              const base = bull[i] ? (value(bull[i]) ?? Number.NaN) : Number.NaN;
              return v === undefined ? '–' : `${(v / base).toFixed(2)}×`;
            })
            .join(' · ')
        : '–';
    const rows: string[][] = [
      [
        'system',
        'deliveries/s',
        '× BullMQ',
        `p50 · p99 at ${rate}/s`,
        'p99 beside a spinning neighbour',
        'CPU per delivery (incl. its database)',
        '× BullMQ',
        'PostgreSQL statements per delivery',
        'load (deliveries/s / latency)',
      ],
    ];
    for (const name of selected) {
      const list = results.get(name);
      if (!list || list.length === 0) {
        rows.push([LABEL[name], skipped.get(name) ?? 'failed', '', '', '', '', '', '', '']);
        continue;
      }
      rows.push([
        LABEL[name],
        each(list, (r) => fmt(r.a.perS)),
        ratio(list, (r) => r.a.perS),
        each(list, (r) => `${fmt(r.b.p50, 1)} / ${fmt(r.b.p99, 1)} ms`),
        each(list, (r) => `${fmt(r.n.p99, 1)} ms`),
        each(list, (r) => `${fmt(r.a.cpuUs)} µs`),
        ratio(list, (r) => r.a.cpuUs),
        each(list, (r) => (Number.isNaN(r.a.statements) ? '–' : fmt(r.a.statements, 2))),
        each(list, (r) => `${r.a.load}/${r.b.load}`),
      ]);
      if (list.some((r) => r.f))
        rows.push([
          `${LABEL[name]}, batched ingest (${BATCH})`,
          each(list, (r) => fmt(r.f?.perS ?? Number.NaN)),
          list.map((r, i) => (bull?.[i] && r.f ? `${(r.f.perS / bull[i].a.perS).toFixed(2)}×` : '–')).join(' · '),
          '',
          '',
          each(list, (r) => `${fmt(r.f?.cpuUs ?? Number.NaN)} µs`),
          list.map((r, i) => (bull?.[i] && r.f ? `${(r.f.cpuUs / bull[i].a.cpuUs).toFixed(2)}×` : '–')).join(' · '),
          each(list, (r) => (r.f === undefined || Number.isNaN(r.f.statements) ? '–' : fmt(r.f.statements, 2))),
          each(list, (r) => r.f?.load ?? '–'),
        ]);
    }
    console.log('');
    console.log(
      `Figures per run, run 1 · run 2 …; each ratio against BullMQ in the same run (${bull ? 'deliveries/s: higher is better; CPU: lower is better' : 'BullMQ did not run'}).`,
    );
    console.log(table(rows));
    console.log(
      `A system delivering fewer than ${rate}/s in its deliveries/s run cannot keep up with the latency run: its p50 and p99 are a growing backlog.`,
    );
    console.log('');
    let anyFailure = false;
    for (const [name, list] of results)
      list.forEach((r, i) => {
        const parts = [
          failures(r.a),
          r.f ? failures(r.f) : '',
          r.b.refused || r.b.missing ? ` latency run: ${r.b.refused} refused, ${r.b.missing} never delivered` : '',
          r.n.refused || r.n.missing
            ? ` latency run beside the neighbour: ${r.n.refused} refused, ${r.n.missing} never delivered`
            : '',
        ].join('');
        if (parts) {
          anyFailure = true;
          console.log(`failures, ${LABEL[name]} run ${i + 1}:${parts}`);
        }
      });
    if (!anyFailure) console.log('failures: none (every signal accepted, delivered once, none missing)');
    for (const [name, why] of skipped) console.log(`${LABEL[name]}: not measured — ${why}`);
    console.log(
      `load average at end: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    cleanup();
    process.off('exit', cleanup);
    await closeAdmin?.();
    await shared.cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function latencyLine(b: Latency): string {
  return (
    `(achieved ${fmt(b.achieved, 1)}/s): p50 ${fmt(b.p50, 1)} ms, p99 ${fmt(b.p99, 1)} ms, ` +
    `max ${fmt(b.max, 1)} ms; POST answered p50 ${fmt(b.answerP50, 1)} ms, p99 ${fmt(b.answerP99, 1)} ms (load ${b.load})${b.refused || b.missing ? ` — ${b.refused} refused, ${b.missing} never delivered` : ''}`
  );
}

/** ", of which PostgreSQL's N" (its cluster's processes), for the systems on PostgreSQL. */
function dbShare(t: Throughput): string {
  return Number.isNaN(t.dbCpuUs) ? '' : `, of which PostgreSQL's ${fmt(t.dbCpuUs)}`;
}

function statementsOf(t: Throughput): string {
  return Number.isNaN(t.statements) ? '' : `; ${fmt(t.statements, 2)} PostgreSQL statements per delivery`;
}

function failures(t: Throughput): string {
  if (!t.refused && !t.missing && !t.duplicates) return '';
  return ` — ${t.refused} refused, ${t.missing} never delivered, ${t.duplicates} duplicates`;
}

try {
  await main();
} catch (error) {
  console.error(`bench/peers.ts failed: ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
}
