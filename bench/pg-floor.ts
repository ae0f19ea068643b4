// The least a durable PostgreSQL store of webhook deliveries costs (issue 25: the goal of
// ≤ 500 µs of CPU per delivery, PostgreSQL's processes included): `npm run bench:pg-floor
// [-- --deliveries N --group G --claim C]`.
//
// Not Guard: three tables with a primary key each and the one index a claim needs, no foreign
// key, no tenant, no endpoint, no retry state, no rate limit, no attempt log beyond a status.
// Each cycle does only what any durable sender must: the signals of a group commit inserted
// with their deliveries by one statement, committed durably (the answer to a POST promises
// them); C due deliveries leased by one statement; their outcomes (the deliveries marked done,
// an attempt row each) written by one statement, both without waiting for the WAL flush (as
// Guard's claims and outcomes). Named prepared statements, the same driver (pg) as Guard.
//
// Printed: CPU per delivery of PostgreSQL's processes (the throw-away cluster's process tree,
// fsync on) and of this process (the pg driver's part: encoding, parsing, the socket), wall
// time, and the same for Guard's queue in the same run (bench:queue-cycle's cycle on one
// endpoint). What is stored costs at least the first two; the in-memory queue of bench:peers
// (HTTP in, a signed HTTPS POST out, nothing stored) costs the rest of any sender's floor.

import os from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startPgCluster, stopPgClusterSync } from '../packages/server/test/postgres-cluster.ts';
import { testSignal } from '../packages/server/test/signals.ts';
import { fmt, load1, table, treeCpuMs } from './lib-receiver.ts';

const { values } = parseArgs({
  options: {
    deliveries: { type: 'string', default: '16000' },
    group: { type: 'string', default: '4' },
    claim: { type: 'string', default: '16' },
    runs: { type: 'string', default: '3' },
  },
});
const N = Number(values.deliveries);
const GROUP = Number(values.group);
const CLAIM = Number(values.claim);
const RUNS = Number(values.runs);
if (![N, GROUP, CLAIM, RUNS].every((v) => Number.isInteger(v) && v >= 1) || GROUP > CLAIM || N < CLAIM)
  throw new Error('--deliveries ≥ --claim ≥ --group ≥ 1 and --runs ≥ 1 are whole numbers');

const SCHEMA = `
  create table fs (id text primary key, body text not null);
  create table fd (id text primary key, signal_id text not null, state text not null,
    next_at timestamptz not null, lease_until timestamptz);
  create index fd_due on fd (next_at) where state = 'pending';
  create table fa (id text primary key, delivery_id text not null, status int not null, at timestamptz not null)`;
const ENQUEUE = `
  with s as (insert into fs select * from unnest($1::text[], $2::text[]) returning id)
  insert into fd (id, signal_id, state, next_at) select id || 'd', id, 'pending', now() from s`;
const CLAIM_SQL = `
  update fd set state = 'delivering', lease_until = now() + interval '1 minute'
  where id in (select id from fd where state = 'pending' and next_at <= now() order by next_at limit $1 for update skip locked)
  returning fd.id, (select body from fs where fs.id = fd.signal_id) as body`;
const OUTCOMES = `
  with u as (update fd set state = 'succeeded', lease_until = null from unnest($1::text[]) as x(id)
    where fd.id = x.id returning fd.id)
  insert into fa select id || 'a', id, 200, now() from u`;

let serial = 0;
const body = JSON.stringify(testSignal('t1', new Date()));

/** Enqueue C signals in groups of G (concurrently, as POSTs share group commits), claim them, record them. */
async function cycle(durable: pg.Pool, fast: pg.Pool, n: number): Promise<number> {
  let done = 0;
  while (done < n) {
    const groups = [];
    for (let k = 0; k < CLAIM; k += GROUP) {
      const ids = Array.from({ length: Math.min(GROUP, CLAIM - k) }, () => `s${++serial}`);
      groups.push(durable.query({ name: 'enqueue', text: ENQUEUE, values: [ids, ids.map(() => body)] }));
    }
    await Promise.all(groups);
    const claimed = await fast.query<{ id: string }>({ name: 'claim', text: CLAIM_SQL, values: [CLAIM] });
    await fast.query({ name: 'outcomes', text: OUTCOMES, values: [claimed.rows.map((r) => r.id)] });
    done += claimed.rows.length;
  }
  return done;
}

const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

console.log(
  `PostgreSQL floor: ${N} deliveries per run (cycles of ${CLAIM}: group commits of ${GROUP}, one claim, one outcomes statement), ` +
    `${RUNS} runs; ${os.cpus().length} CPUs, node ${process.version}, load ${load1()}`,
);
const cluster = await startPgCluster({ durable: true, label: 'pg-floor' });
// An uncaught error skips the finally below; the cluster goes with the process all the same.
process.on('exit', () => stopPgClusterSync(cluster.dir));
try {
  const rows: string[][] = [['run', "PostgreSQL's processes", 'this process (pg driver)', 'both', 'wall', 'load']];
  const figures: number[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const url = await cluster.createDatabase('floor');
    const durable = new pg.Pool({ connectionString: url, max: 4 });
    // Claims and outcomes commit without waiting for the WAL flush, as Guard's do.
    const fast = new pg.Pool({ connectionString: url, max: 1, options: '-c synchronous_commit=off' });
    // pool.end() resolves before its connections have closed; the drop (WITH FORCE) below may
    // end one still open, which reports the termination as an error of that idle connection.
    for (const pool of [durable, fast]) pool.on('error', () => {});
    try {
      await durable.query(SCHEMA);
      await cycle(durable, fast, 1000);
      const load = load1();
      const pg0 = treeCpuMs(cluster.pids().slice(0, 1));
      const own0 = ownCpuMs();
      const t0 = performance.now();
      const n = await cycle(durable, fast, N);
      const pgUs = ((treeCpuMs(cluster.pids().slice(0, 1)) - pg0) * 1000) / n;
      const ownUs = ((ownCpuMs() - own0) * 1000) / n;
      figures.push(pgUs + ownUs);
      rows.push([
        String(run),
        `${fmt(pgUs)} µs`,
        `${fmt(ownUs)} µs`,
        `${fmt(pgUs + ownUs)} µs`,
        `${fmt(((performance.now() - t0) * 1000) / n)} µs`,
        String(load),
      ]);
    } finally {
      await durable.end();
      await fast.end();
      await cluster.dropDatabase(url);
    }
  }
  console.log(table(rows));
  console.log(`least of ${RUNS}: ${fmt(Math.min(...figures))} µs of CPU per delivery for what is stored`);
} finally {
  await cluster.stop();
}
