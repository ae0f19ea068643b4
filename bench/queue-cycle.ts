// The delivery queue alone (issue 25, item 3): `npm run bench:queue-cycle [-- --engine sqlite|postgres|both
// --deliveries N --group G --endpoints E --merged]`. No HTTP, no receiver: each cycle enqueues 16 signals
// in group commits of G (as concurrent POSTs share one), claims them and records their outcomes
// (succeeded), as the worker does, over and over — so the figures are the queue's statements
// and nothing else. Each engine runs twice, in a fresh database each time: with the one endpoint
// that gets the work, and with E idle endpoints of another tenant configured beside it, to show
// that a claim's cost follows the endpoints with work, not the number configured.
//
// Printed per run: the database's CPU per delivery — PostgreSQL: every process of a throw-away
// cluster (fsync on), from /proc; SQLite: this process's CPU (SQLite runs in it, with the
// queue's JavaScript and the harness) — and the wall time per delivery; on PostgreSQL the
// statements that took the most execution time per delivery (pg_stat_statements, with the
// foreign-key checks they fire). The ratio is the run with E idle endpoints over the one without.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type Db, openDatabase } from '../packages/server/src/db/index.ts';
import { createDeliveryQueue, type DeliveryQueue, ensurePartitions } from '../packages/server/src/webhooks/index.ts';
import { type PgCluster, startPgCluster, stopPgClusterSync } from '../packages/server/test/postgres-cluster.ts';
import { testEndpoint, testSignal } from '../packages/server/test/signals.ts';
import { fmt, load1, table, treeCpuMs } from './lib-receiver.ts';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'both' },
    deliveries: { type: 'string', default: '8000' },
    group: { type: 'string', default: '4' },
    endpoints: { type: 'string', default: '5000' },
    merged: { type: 'boolean', default: false },
  },
});
const ENGINES = values.engine === 'both' ? (['sqlite', 'postgres'] as const) : [values.engine as 'sqlite' | 'postgres'];
const N = Number(values.deliveries);
const GROUP = Number(values.group);
const IDLE = Number(values.endpoints);
const MERGED = values.merged;
const CLAIM = 16;
const WARM_UP = 1000;
if (![N, GROUP, IDLE].every((v) => Number.isInteger(v) && v >= 0) || GROUP < 1 || GROUP > CLAIM || N < CLAIM)
  throw new Error('--deliveries ≥ 16, --group 1–16 and --endpoints ≥ 0 are whole numbers');
for (const e of ENGINES) if (e !== 'sqlite' && e !== 'postgres') throw new Error(`unknown --engine ${e}`);

const T0 = new Date();

// The queue's own types, through its face.
type ClaimedDelivery = Awaited<ReturnType<DeliveryQueue['claim']>>[number];
type AttemptOutcome = Parameters<DeliveryQueue['recordOutcomes']>[0][number];
type OutcomePolicy = Parameters<DeliveryQueue['recordOutcomes']>[1];

async function seed(db: Db, idle: number): Promise<void> {
  await db
    .insertInto('tenants')
    .values([
      { id: 't1', name: 'busy', created_at: T0.toISOString() },
      { id: 't2', name: 'idle', created_at: T0.toISOString() },
    ])
    .execute();
  await db
    .insertInto('webhook_endpoints')
    .values(testEndpoint('e1', 't1', 1, T0))
    .execute();
  for (let i = 0; i < idle; i += 500)
    await db
      .insertInto('webhook_endpoints')
      .values(Array.from({ length: Math.min(500, idle - i) }, (_, k) => testEndpoint(`idle-${i + k}`, 't2', 1, T0)))
      .execute();
}

/** What the worker's policy decides for a 2xx: succeeded, its attempt logged, no streak. */
const succeeded: OutcomePolicy = (o) => ({
  outcome: 'succeeded',
  delivery: { kind: 'succeeded', attempts: o.attempt, lastStatus: 200, completedAt: new Date().toISOString() },
  attempt: {
    attempt: o.attempt,
    startedAt: o.startedAt.toISOString(),
    durationMs: o.durationMs,
    status: 200,
    error: null,
    responseExcerpt: 'ok',
  },
  failingSince: undefined,
  failureStreak: undefined,
  alert: undefined,
  disable: undefined,
});

const answered = (claimed: ClaimedDelivery[]): AttemptOutcome[] =>
  claimed.map((c) => ({
    delivery: c.delivery,
    attempt: 1,
    startedAt: new Date(),
    durationMs: 3,
    result: { kind: 'response' as const, status: 200, retryAfter: undefined, excerpt: 'ok' },
    sent: { signature: 'sha256=00', standardSignature: 'v1,00', traceparent: null },
  }));

/**
 * Enqueue, claim, record, until n deliveries have been recorded. With --merged, each cycle's
 * outcomes are recorded with the next cycle's claim (recordOutcomesAndClaim, as the worker
 * does when outcomes wait at a claim), where the queue has it; else by recordOutcomes first.
 */
async function cycle(db: Db, n: number): Promise<number> {
  const queue = createDeliveryQueue(db);
  let done = 0;
  let waiting: AttemptOutcome[] = [];
  while (done < n) {
    const groups = [];
    for (let k = 0; k < CLAIM; k += GROUP)
      groups.push(
        queue.enqueue(
          Array.from({ length: Math.min(GROUP, CLAIM - k) }, () => ({ signal: testSignal('t1', new Date()) })),
        ),
      );
    await Promise.all(groups);
    const request = {
      now: new Date(Date.now() + 1000),
      leaseMs: 60_000,
      limit: CLAIM,
      perEndpoint: CLAIM,
      busy: new Map(),
    };
    if (!MERGED) {
      const claimed = await queue.claim(request);
      await queue.recordOutcomes(answered(claimed), succeeded);
      done += claimed.length;
      continue;
    }
    let claimed: ClaimedDelivery[];
    if (waiting.length > 0 && queue.recordOutcomesAndClaim)
      claimed = (await queue.recordOutcomesAndClaim(waiting, succeeded, request)).claimed;
    else {
      if (waiting.length > 0) await queue.recordOutcomes(waiting, succeeded);
      claimed = await queue.claim(request);
    }
    done += waiting.length;
    waiting = answered(claimed);
  }
  if (waiting.length > 0) await queue.recordOutcomes(waiting, succeeded);
  return done + waiting.length;
}

interface Run {
  cpuUs: number;
  wallUs: number;
  load: string;
}

const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function run(engine: 'sqlite' | 'postgres', idle: number, cluster: PgCluster | undefined): Promise<Run> {
  const dataDir = await mkdtemp(join(os.tmpdir(), 'guard-queue-cycle-'));
  const url = cluster ? await cluster.createDatabase('cycle') : undefined;
  const db = await openDatabase({
    dataDir,
    database: url ? { engine: 'postgres', url, password: undefined, display: url, poolSize: 8 } : { engine: 'sqlite' },
  });
  const admin = url ? new pg.Client({ connectionString: url }) : undefined;
  try {
    // The server's layout: this month's partitions and the next two's beside the default ones.
    if (url) await ensurePartitions(db, new Date());
    await seed(db, idle);
    await admin?.connect();
    await admin?.query('create extension if not exists pg_stat_statements');
    await admin?.query('analyze');
    await cycle(db, WARM_UP);
    await admin?.query('select pg_stat_statements_reset()');
    const cpu = () => (cluster ? treeCpuMs(cluster.pids().slice(0, 1)) : ownCpuMs());
    const load = load1();
    const c0 = cpu();
    const t0 = performance.now();
    const n = await cycle(db, N);
    const r = { cpuUs: ((cpu() - c0) * 1000) / n, wallUs: ((performance.now() - t0) * 1000) / n, load };
    console.log(
      `${engine}, ${idle} idle endpoints: ${fmt(r.cpuUs)} µs CPU, ${fmt(r.wallUs)} µs wall per delivery (load ${load})`,
    );
    if (admin) {
      const top = await admin.query<{ us: string; calls: string; q: string }>(
        `select round((total_exec_time * 1000 / $1)::numeric, 1) as us, calls,
           left(regexp_replace(query, '\\s+', ' ', 'g'), 70) as q
         from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
         order by total_exec_time desc limit 6`,
        [n],
      );
      for (const s of top.rows) console.log(`  ${s.us.padStart(7)} µs  ${s.calls.padStart(6)} calls  ${s.q}`);
    }
    return r;
  } finally {
    await admin?.end();
    await db.destroy();
    if (cluster && url) await cluster.dropDatabase(url);
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });
  }
}

console.log(
  `Queue cycle: ${N} deliveries per run (cycles of ${CLAIM}: group commits of ${GROUP}, one claim, one outcomes batch); ` +
    `${os.cpus().length} CPUs, node ${process.version}, load ${load1()}`,
);
const cluster = ENGINES.includes('postgres')
  ? await startPgCluster({
      durable: true,
      label: 'queue-cycle',
      settings: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' },
    })
  : undefined;
// An uncaught error skips the finally below; the cluster goes with the process all the same.
if (cluster) process.on('exit', () => stopPgClusterSync(cluster.dir));
try {
  const rows: string[][] = [
    ['engine', 'CPU per delivery, 1 endpoint', `with ${IDLE} idle beside it`, '×', 'wall, 1 · with idle'],
  ];
  for (const engine of ENGINES) {
    const one = await run(engine, 0, engine === 'postgres' ? cluster : undefined);
    const many = await run(engine, IDLE, engine === 'postgres' ? cluster : undefined);
    rows.push([
      engine === 'postgres' ? 'PostgreSQL (its processes)' : 'SQLite (this process)',
      `${fmt(one.cpuUs)} µs`,
      `${fmt(many.cpuUs)} µs`,
      `${(many.cpuUs / one.cpuUs).toFixed(2)}×`,
      `${fmt(one.wallUs)} · ${fmt(many.wallUs)} µs`,
    ]);
  }
  console.log('');
  console.log(table(rows));
} finally {
  await cluster?.stop();
}
