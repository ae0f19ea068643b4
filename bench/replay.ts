// Replay benchmark: `node bench/replay.ts [--replay N] [--rate R] [--seconds S] [--replay-rate Q]`.
// Live traffic alone, then the same live traffic while a replay of N deliveries runs, in the
// same run, on the same endpoint (the hard case: the replay competes for that endpoint's
// slots, not just for the machine). The real bin/guard-server runs as a child process (SQLite
// data dir in a temp dir, --webhook-replay-rate Q); an HTTPS receiver on loopback runs in
// another child (this file with `--receiver`), so neither shares an event loop with the
// measuring client. Receipt times are taken in the receiver with process.hrtime
// (CLOCK_MONOTONIC: one clock for all processes).
//
//   seed:  N succeeded deliveries of the endpoint written into the stopped server's database
//          (signals included), so the replay has material without sending anything first.
//   alone: POST /v1/signals paced at R/s for S seconds; latency = receipt − the time just
//          before the POST; p50/p99; live deliveries/s.
//   with:  the replay of the N started (status succeeded, the seeded range only), then the
//          same paced live traffic for S seconds; the same figures, and the replay's own
//          deliveries/s meanwhile.
// Both windows report the server's CPU per delivery (live and replayed together, from /proc)
// and the load average, because the machine is shared. Goal: live p99 while replaying ≤ 100 ms.
// Exits 0 whatever the goal says; non-zero only when something fails to run.

import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openDatabase } from '../packages/server/src/db/index.ts';
import {
  ApiClient,
  createTestPki,
  freePort,
  type GuardProcess,
  guardSetup,
  nowNs,
  postSignalsPaced,
  type Receipt,
  signalBody,
  sleep,
  spawnGuard,
  startReceiver,
  type TestPki,
} from './lib-tls.ts';

const SELF = fileURLToPath(import.meta.url);
const GOAL_P99_MS = 100;

// ---------------------------------------------------------------------------------------
// Receiver child: records live receipts (signal id, µs) and counts replayed ones.

type ToReceiver = { type: 'start'; certPem: string; keyPem: string } | { type: 'mark' } | { type: 'dump' };
type FromReceiver =
  | { type: 'ready'; port: number }
  | { type: 'mark'; replayed: number; atUs: number }
  | { type: 'dump'; live: [string, number][]; replayed: number };

async function receiverMain(): Promise<void> {
  const send = (m: FromReceiver) => process.send?.(m);
  /** Live signals: their first receipt. Replayed deliveries carry seeded signal ids (prefix "seed"). */
  const live = new Map<string, number>();
  let replayed = 0;
  const onReceipt = (r: Receipt) => {
    if (r.signalId.startsWith('sig_seed')) replayed++;
    else if (!live.has(r.signalId)) live.set(r.signalId, Number(r.receivedNs / 1000n));
  };
  process.on('message', async (m: ToReceiver) => {
    if (m.type === 'start') {
      const r = await startReceiver({ pki: { certPem: m.certPem, keyPem: m.keyPem }, onReceipt });
      send({ type: 'ready', port: r.port });
    } else if (m.type === 'mark') send({ type: 'mark', replayed, atUs: Number(nowNs() / 1000n) });
    else if (m.type === 'dump') send({ type: 'dump', live: [...live], replayed });
  });
  process.on('disconnect', () => process.exit(0));
}

class ReceiverHandle {
  readonly child: ChildProcess;
  port = 0;
  constructor() {
    this.child = fork(SELF, ['--receiver'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  }
  private ask<T extends FromReceiver['type']>(m: ToReceiver, answer: T): Promise<Extract<FromReceiver, { type: T }>> {
    return new Promise((resolve, reject) => {
      const onMessage = (r: FromReceiver) => {
        if (r.type !== answer) return;
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        resolve(r as Extract<FromReceiver, { type: T }>);
      };
      const onExit = () => reject(new Error('the receiver process exited'));
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send(m);
    });
  }
  async start(pki: TestPki) {
    this.port = (await this.ask({ type: 'start', certPem: pki.certPem, keyPem: pki.keyPem }, 'ready')).port;
  }
  mark() {
    return this.ask({ type: 'mark' }, 'mark');
  }
  dump() {
    return this.ask({ type: 'dump' }, 'dump');
  }
  stop() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
  }
}

// ---------------------------------------------------------------------------------------

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** N succeeded deliveries of the endpoint, written while the server is stopped. */
async function seed(dataDir: string, endpointId: string, n: number): Promise<{ since: string; until: string }> {
  const db = await openDatabase({ dataDir });
  try {
    const agent = await db.selectFrom('agents').select(['id', 'tenant_id']).executeTakeFirstOrThrow();
    const t0 = Date.now() - 60_000;
    for (let i = 0; i < n; i += 1000) {
      const rows = Array.from({ length: Math.min(1000, n - i) }, (_, k) => {
        const at = new Date(t0 + i + k).toISOString();
        return { at, signal: `sig_seed_${String(i + k).padStart(8, '0')}` };
      });
      await db
        .insertInto('signals')
        .values(
          rows.map(({ at, signal }, k) => ({
            ...(signalBody(i + k) as { signal_type: string; severity: number; description: string }),
            identity_id: 'u',
            identity_name: 'ops@example.com',
            id: signal,
            tenant_id: agent.tenant_id,
            agent_id: agent.id,
            server_id: agent.id,
            server_name: 'bench-1',
            environment: 'production',
            created_at: at,
            received_at: at,
            is_test: 0,
            event_type: 'signal_created',
            event_data: null,
          })),
        )
        .execute();
      await db
        .insertInto('webhook_deliveries')
        .values(
          rows.map(({ at, signal }) => ({
            id: crypto.randomUUID(),
            tenant_id: agent.tenant_id,
            signal_id: signal,
            endpoint_id: endpointId,
            state: 'succeeded' as const,
            attempts: 1,
            next_attempt_at: at,
            lease_until: null,
            leased_by: null,
            last_status: 200,
            last_error: null,
            created_at: at,
            completed_at: at,
            replay_id: null,
          })),
        )
        .execute();
    }
    return { since: new Date(t0).toISOString(), until: new Date(t0 + n).toISOString() };
  } finally {
    await db.destroy();
  }
}

interface Window {
  sent: number;
  achievedRate: number;
  p50: number;
  p99: number;
  max: number;
  liveDeliveriesPerS: number;
  replayedPerS: number;
  serverCpuUsPerDelivery: number;
  load: number[];
}

/** POSTs paced at `rate`/s for `seconds`; live latency from the receiver's receipts. */
async function window(
  api: ApiClient,
  receiver: ReceiverHandle,
  server: GuardProcess,
  agentKey: string,
  rate: number,
  seconds: number,
  offset: number,
): Promise<Window> {
  const total = Math.round(rate * seconds);
  const mark0 = await receiver.mark();
  const cpu0 = processCpuMs(server.pid);
  const { sentUs, ids, t0, pacedS } = await postSignalsPaced(total, rate, (k) =>
    api.post('/v1/signals', agentKey, signalBody(offset + k)),
  );
  // Every live signal received (at most 30 s more).
  const deadline = Date.now() + 30_000;
  let dump = await receiver.dump();
  let received = new Map(dump.live);
  while (ids.some((id) => !received.has(id))) {
    if (Date.now() > deadline) throw new Error('live signals were not all delivered within 30 s');
    await sleep(50);
    dump = await receiver.dump();
    received = new Map(dump.live);
  }
  const mark1 = await receiver.mark();
  const cpuMs = processCpuMs(server.pid) - cpu0;
  const ms = ids.map((id, k) => ((received.get(id) as number) - sentUs[k]) / 1000).sort((a, b) => a - b);
  const lastLive = Math.max(...ids.map((id) => received.get(id) as number));
  const windowS = (mark1.atUs - mark0.atUs) / 1e6;
  const replayed = mark1.replayed - mark0.replayed;
  return {
    sent: total,
    achievedRate: total / pacedS,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    max: ms[ms.length - 1],
    liveDeliveriesPerS: total / ((lastLive - t0) / 1e6),
    replayedPerS: replayed / windowS,
    serverCpuUsPerDelivery: (cpuMs * 1000) / (total + replayed),
    load: os.loadavg(),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      replay: { type: 'string', default: '20000' },
      rate: { type: 'string', default: '500' },
      seconds: { type: 'string', default: '10' },
      'replay-rate': { type: 'string', default: '1000' },
    },
  });
  const n = Number(values.replay);
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const replayRate = Number(values['replay-rate']);

  console.log('Replay benchmark: live traffic alone, then beside a replay to the same endpoint');
  console.log(
    `machine: ${os.availableParallelism()} CPUs (nproc), ${os.cpus()[0]?.model ?? '?'}, ` +
      `${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM; node ${process.version}`,
  );
  console.log(
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-bench-replay-'));
  const receiver = new ReceiverHandle();
  let server: GuardProcess | undefined;
  const cleanup = () => {
    receiver.stop();
    if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  };
  process.on('exit', cleanup);
  try {
    const pki = await createTestPki(dir);
    await receiver.start(pki);
    const dataDir = join(dir, 'data');
    const setup = guardSetup(dataDir);
    const port = await freePort();
    const start = () =>
      spawnGuard({ dataDir, port, caPath: pki.caPath, args: ['--webhook-replay-rate', String(replayRate)] });
    server = await start();
    let api = new ApiClient(server.url, 128);
    const agent = await api.must('/v1/agents/enroll', undefined, { token: setup.enroll_token, hostname: 'bench-1' });
    const endpoint = await api.must('/v1/webhooks/endpoints', setup.admin_token, {
      name: 'bench receiver',
      url: `https://127.0.0.1:${receiver.port}/hook`,
    });
    await api.close();
    await server.stop('SIGTERM');
    console.log(`seeding ${fmt(n)} succeeded deliveries …`);
    const range = await seed(dataDir, endpoint.id, n);
    server = await start();
    api = new ApiClient(server.url, 128);
    console.log('warm-up …');
    await window(api, receiver, server, agent.api_key, rate, 2, 0);

    console.log(`live alone: ${rate} signals/s for ${seconds} s …`);
    const alone = await window(api, receiver, server, agent.api_key, rate, seconds, 10_000);

    const started = await api.must(
      `/v1/webhooks/endpoints/${endpoint.id}/replay`,
      setup.admin_token,
      { status: 'succeeded', since: range.since, until: range.until },
      202,
    );
    if (started.total !== n) throw new Error(`the replay matched ${started.total}, not ${n}`);
    await sleep(500); // under way
    console.log(`live beside the replay of ${fmt(n)}: ${rate} signals/s for ${seconds} s …`);
    const during = await window(api, receiver, server, agent.api_key, rate, seconds, 20_000);
    const progress = await fetch(`${server.url}/v1/webhooks/replays/${started.id}`, {
      headers: { authorization: `Bearer ${setup.admin_token}` },
    }).then((r) => r.json());
    await api.close();
    await server.stop('SIGTERM');

    const rows = [
      [
        'window',
        'live sent/s',
        'live delivered/s',
        'p50',
        'p99',
        'max',
        'replayed/s',
        'server CPU/delivery',
        'load (1 min)',
      ],
      ...(
        [
          ['live alone', alone],
          [`beside a replay of ${fmt(n)}`, during],
        ] as const
      ).map(([name, w]) => [
        name,
        fmt(w.achievedRate, 1),
        fmt(w.liveDeliveriesPerS, 1),
        `${w.p50.toFixed(1)} ms`,
        `${w.p99.toFixed(1)} ms`,
        `${w.max.toFixed(1)} ms`,
        fmt(w.replayedPerS),
        `${fmt(w.serverCpuUsPerDelivery)} µs`,
        w.load[0].toFixed(2),
      ]),
    ];
    const widths = rows[0].map((_, col) => Math.max(...rows.map((r) => r[col].length)));
    const line = (r: readonly string[]) => `| ${r.map((c, col) => c.padEnd(widths[col])).join(' | ')} |`;
    console.log('');
    console.log(line(rows[0]));
    console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
    for (const r of rows.slice(1)) console.log(line(r));
    console.log('');
    console.log(
      `beside the replay ÷ alone (the anchor, same run): live delivered/s ` +
        `${(during.liveDeliveriesPerS / alone.liveDeliveriesPerS).toFixed(2)} ×, p99 ${(during.p99 / alone.p99).toFixed(1)} ×`,
    );
    console.log(
      `live p99 beside the replay: ${during.p99.toFixed(1)} ms (alone ${alone.p99.toFixed(1)} ms); goal ≤ ${GOAL_P99_MS} ms: ` +
        (during.p99 <= GOAL_P99_MS ? 'PASS' : 'MISS'),
    );
    console.log(
      `replay at --webhook-replay-rate ${fmt(replayRate)}: ${fmt(progress.sent)} of ${fmt(progress.total)} sent by the end ` +
        `of the second window (${progress.state})`,
    );
    console.log(
      `load average at end: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    cleanup();
    process.off('exit', cleanup);
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--receiver') await receiverMain();
else {
  try {
    await main();
  } catch (error) {
    console.error(`bench/replay.ts failed: ${(error as Error).stack ?? error}`);
    process.exitCode = 1;
  }
}
