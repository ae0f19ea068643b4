// Three real bin/guard-server replicas on one PostgreSQL database (the PostgreSQL pass only):
// 10,000 signals created round-robin through the three, delivered to two endpoints (two paths
// of one HTTPS receiver on loopback). Once 30 % of the signals are created one replica that
// is delivering right then is killed with SIGKILL and stays dead: its leased
// deliveries must be taken over by the others once the leases expire. At 60 % another
// replica is restarted (SIGTERM, then started again). Then every pair must arrive at least once, each duplicate
// with its pair's Guard-Delivery, each Guard-Delivery belonging to one pair; and the
// receiver must never have more attempts of one endpoint in flight than the per-endpoint
// limit, whichever replicas sent them. The duplicate count is reported.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  ApiClient,
  createTestPki,
  freePort,
  type GuardProcess,
  guardSetup,
  type Receipt,
  type Receiver,
  signalBody,
  sleep,
  spawnGuard,
  startReceiver,
} from '../../../bench/lib-tls.ts';
import { assertOneIdPerPair, waitForEmptyQueue, waitForEveryPair } from './at-least-once.ts';
import { databaseArgs, dropTestDatabase, ON_POSTGRES } from './test-database.ts';

const REPLICAS = 3;
const SIGNALS = 10_000;
const CREATE_CONCURRENCY = 32;
const PATHS = ['/a', '/b'] as const;
const PAIRS = SIGNALS * PATHS.length;
const KILL_AT = Math.round(SIGNALS * 0.3);
const RESTART_AT = Math.round(SIGNALS * 0.6);
const PER_ENDPOINT = 16;
const LEASE_MS = 6_000;
const RECOVERY_MAX_MS = 120_000;
const SERVER_ARGS = [
  '--webhook-retry-schedule',
  '0,200ms,500ms,1s',
  '--webhook-timeout-ms',
  '1000',
  '--webhook-lease-ms',
  String(LEASE_MS),
  '--webhook-endpoint-concurrency',
  String(PER_ENDPOINT),
];

describe('three replicas on one PostgreSQL, one killed and one restarted mid-run', { skip: !ON_POSTGRES }, () => {
  it('delivers every (signal, endpoint) pair at least once, duplicates with their Guard-Delivery, within the per-endpoint limit', {
    timeout: 300_000,
  }, async (t) => {
    const dir = await mkdtemp(join(os.tmpdir(), 'guard-replicas-'));
    const pki = await createTestPki(dir);
    const dataDirs = Array.from({ length: REPLICAS }, (_, i) => join(dir, `replica-${i}`));
    const receipts: Receipt[] = [];
    const pairsSeen = new Set<string>();
    const inFlight = new Map<string, number>();
    const maxInFlight = new Map<string, number>();
    let receiver: Receiver | undefined;
    const replicas: (GuardProcess | undefined)[] = [];
    const clients: (ApiClient | undefined)[] = [];
    try {
      receiver = await startReceiver({
        pki,
        delayMs: [0, 8],
        onStart(path) {
          const n = (inFlight.get(path) ?? 0) + 1;
          inFlight.set(path, n);
          maxInFlight.set(path, Math.max(maxInFlight.get(path) ?? 0, n));
          return () => inFlight.set(path, (inFlight.get(path) ?? 1) - 1);
        },
        onReceipt(r) {
          receipts.push(r);
          pairsSeen.add(`${r.signalId} ${r.path}`);
        },
      });
      // One database; every replica its own data dir holding the same master key.
      const database = await databaseArgs(dataDirs[0], { migrate: false });
      const masterKey = `${randomBytes(32).toString('base64')}\n`;
      for (const d of dataDirs) {
        await mkdir(d, { recursive: true, mode: 0o700 });
        await writeFile(join(d, 'master.key'), masterKey, { mode: 0o600 });
      }
      const setup = guardSetup(dataDirs[0], database);
      const ports = await Promise.all(dataDirs.map(() => freePort()));
      // Each replica's /metrics shows the one delivery queue they share.
      const metricsPorts = await Promise.all(dataDirs.map(() => freePort()));
      const metricsUrl = (i: number) => `http://127.0.0.1:${metricsPorts[i]}/metrics`;
      const start = async (i: number) => {
        replicas[i] = await spawnGuard({
          dataDir: dataDirs[i],
          port: ports[i],
          caPath: pki.caPath,
          args: [...database, ...SERVER_ARGS, '--metrics-listen', `127.0.0.1:${metricsPorts[i]}`],
        });
        clients[i] = new ApiClient(replicas[i]?.url as string, CREATE_CONCURRENCY);
      };
      for (let i = 0; i < REPLICAS; i++) await start(i);
      const first = clients[0] as ApiClient;
      const agent = await first.must('/v1/agents/enroll', undefined, { token: setup.enroll_token, hostname: 'r-1' });
      for (const path of PATHS)
        await first.must('/v1/webhooks/endpoints', setup.admin_token, {
          name: `receiver ${path}`,
          url: `https://127.0.0.1:${receiver.port}${path}`,
        });

      // The kill and the restart, as signal creation passes 30 % and 60 %. The replica killed
      // is whichever of the first two holds the most connections to the receiver right then
      // (`ss`): one that is delivering, so that attempts are cut off mid-flight. (Claims of one
      // endpoint are taken by one replica at a time, so one replica often does most of it.)
      const receiverPort = receiver.port;
      const deliveringReplica = (): number => {
        const counts = [0, 0];
        try {
          const out = execFileSync('ss', ['-tnpH', 'state', 'established', 'dst', `127.0.0.1:${receiverPort}`], {
            encoding: 'utf8',
          });
          for (const m of out.matchAll(/pid=(\d+)/g))
            for (const i of [0, 1]) if (replicas[i]?.pid === Number(m[1])) counts[i]++;
        } catch {
          // no ss: the second replica
        }
        return counts[0] > counts[1] ? 0 : 1;
      };
      let victim = 1;
      const down = new Set<number>();
      let killedAt = 0;
      let killedWith = 0;
      let restartMs = 0;
      const events: Promise<void>[] = [];
      const known = new Set<string>();
      const progress = () => {
        if (known.size >= KILL_AT && killedAt === 0) {
          killedWith = pairsSeen.size;
          killedAt = performance.now();
          victim = deliveringReplica();
          down.add(victim);
          replicas[victim]?.child.kill('SIGKILL');
        }
        if (known.size >= RESTART_AT && restartMs === 0) {
          restartMs = -1;
          down.add(2);
          events.push(
            (async () => {
              const t0 = performance.now();
              await clients[2]?.close().catch(() => {});
              await replicas[2]?.stop('SIGTERM');
              const exit = await replicas[2]?.exited;
              assert.deepEqual(exit, { code: 0, signal: null }, 'the restarted replica stopped cleanly');
              await start(2);
              down.delete(2);
              restartMs = performance.now() - t0;
            })(),
          );
        }
      };

      // Signals round-robin over the replicas that are up; a POST cut off by a kill or a
      // restart is retried on the next replica (as a new signal: the first may exist).
      let cutOff = 0;
      let next = 0;
      const created = performance.now();
      const worker = async (w: number) => {
        while (next < SIGNALS) {
          const i = next++;
          const deadline = performance.now() + 60_000;
          for (let attempt = 0; ; attempt++) {
            const r = (w + i + attempt) % REPLICAS;
            const client = clients[r];
            if (down.has(r) || !client) continue; // not sent: try the next replica
            const res = await client.post('/v1/signals', agent.api_key, signalBody(i)).catch(() => undefined);
            if (res?.status === 201) {
              known.add(res.json.signal_id as string);
              progress();
              break;
            }
            if (res && res.status < 500)
              throw new Error(`POST /v1/signals answered ${res.status}: ${JSON.stringify(res.json)}`);
            cutOff++; // sent, no answer or a 5xx: the signal may exist all the same
            if (performance.now() > deadline) throw new Error('POST /v1/signals kept failing for 60 s');
            await sleep(20);
          }
        }
      };
      await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, (_, w) => worker(w)));
      const createMs = performance.now() - created;
      assert.equal(known.size, SIGNALS);

      const left = await waitForEveryPair(receipts, known, PATHS, RECOVERY_MAX_MS, 100);
      await Promise.all(events);
      assert.ok(killedAt > 0, 'the kill happened');
      assert.ok(restartMs > 0, 'the restart happened');
      const recoveredMs = performance.now() - killedAt;
      assert.equal(left, 0, `${left} (signal, endpoint) pairs never arrived within ${RECOVERY_MAX_MS} ms`);
      // Late duplicates (the killed replica's leases run out first) land before the analysis.
      const live = [0, 1, 2].find((i) => !down.has(i)) as number;
      const queued = await waitForEmptyQueue(metricsUrl(live), RECOVERY_MAX_MS, 100);
      assert.equal(
        queued,
        0,
        `${queued} deliveries still waiting or in flight ${RECOVERY_MAX_MS} ms after every pair arrived`,
      );

      const { pairs, orphans, duplicates, duplicatedPairs } = assertOneIdPerPair(
        receipts,
        known,
        PATHS,
        cutOff,
        /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      for (const p of PATHS)
        assert.ok(
          (maxInFlight.get(p) ?? 0) <= PER_ENDPOINT,
          `${maxInFlight.get(p)} attempts to ${p} in flight at once (limit ${PER_ENDPOINT}, across replicas)`,
        );
      for (const f of [
        `replicas: ${REPLICAS}; signals acknowledged: ${known.size} in ${Math.round(createMs)} ms; POSTs cut off or refused: ${cutOff}; unacknowledged signals that exist and were delivered: ${orphans}`,
        `SIGKILL of replica ${victim} once ${KILL_AT} of ${SIGNALS} signals were created (${killedWith} of ${PAIRS} pairs had arrived); graceful restart of replica 2 at ${RESTART_AT} signals: ${Math.round(restartMs)} ms`,
        `recovery (SIGKILL → every pair arrived, lease ${LEASE_MS} ms): ${Math.round(recoveredMs)} ms`,
        `receipts: ${receipts.length}; distinct pairs: ${pairs}; duplicates: ${duplicates} (over ${duplicatedPairs} pairs), all with their pair's Guard-Delivery`,
        `most attempts in flight to one endpoint: ${PATHS.map((p) => `${p} ${maxInFlight.get(p)}`).join(', ')} (limit ${PER_ENDPOINT})`,
      ])
        t.diagnostic(f);
    } finally {
      for (const c of clients) await c?.close().catch(() => {});
      for (const r of replicas)
        if (r && r.child.exitCode === null && r.child.signalCode === null) await r.stop('SIGKILL');
      await receiver?.close();
      await dropTestDatabase(dataDirs[0]);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
