// At-least-once webhook delivery across a crash of the real bin/guard-server (DESIGN §5:
// outbox, leases, same Guard-Delivery on every attempt). 5,000 signals go through the API to
// two endpoints (two paths on one HTTPS receiver on loopback, trusted through
// NODE_EXTRA_CA_CERTS); once ~30 % of the 10,000 (signal, endpoint) pairs have arrived the
// server is SIGKILLed — signal creation may still be under way — and restarted on the same
// data dir. Then every pair must arrive at least once, each duplicate with the Guard-Delivery
// of its first arrival, and each Guard-Delivery must belong to exactly one pair. Signals whose
// POST was cut off by the kill may or may not exist; any that do must be delivered the same
// way. A sample of signatures is verified with the SDK.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { constructEvent, TIMESTAMP_HEADER, WebhookVerificationError } from '@guard/webhooks';
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

const SIGNALS = 5_000;
const CREATE_CONCURRENCY = 32;
const PATHS = ['/a', '/b'] as const;
const PAIRS = SIGNALS * PATHS.length;
/** Kill once this many distinct pairs have arrived (30 %). */
const KILL_AT = Math.round(PAIRS * 0.3);
const KILL_WAIT_MS = 90_000;
const RECOVERY_MAX_MS = 90_000;
const SIGNATURE_SAMPLE = 300;
const SERVER_ARGS = ['--webhook-retry-schedule', '0,200ms,500ms,1s'];

describe('webhook delivery across a SIGKILL of the real guard-server', () => {
  it('delivers every (signal, endpoint) pair at least once; duplicates keep their Guard-Delivery', {
    timeout: 300_000,
  }, async (t) => {
    const dir = await mkdtemp(join(os.tmpdir(), 'guard-delivery-crash-'));
    const dataDir = join(dir, 'data');
    const pki = await createTestPki(dir);
    const receipts: Receipt[] = [];
    const pairsSeen = new Set<string>();
    let onProgress: (() => void) | undefined;
    let receiver: Receiver | undefined;
    let server: GuardProcess | undefined;
    let api: ApiClient | undefined;
    try {
      receiver = await startReceiver({
        pki,
        delayMs: [0, 8],
        onReceipt(r) {
          receipts.push(r);
          pairsSeen.add(`${r.signalId} ${r.path}`);
          onProgress?.();
        },
      });
      const setup = guardSetup(dataDir);
      const port = await freePort();
      // Its /metrics shows the delivery queue; the restarted server listens on the same ports.
      const metricsPort = await freePort();
      const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
      const args = [...SERVER_ARGS, '--metrics-listen', `127.0.0.1:${metricsPort}`];
      server = await spawnGuard({ dataDir, port, caPath: pki.caPath, args });
      api = new ApiClient(server.url, CREATE_CONCURRENCY);
      const agent = await api.must('/v1/agents/enroll', undefined, { token: setup.enroll_token, hostname: 'crash-1' });
      const secrets = new Map<string, string>();
      for (const path of PATHS) {
        const ep = await api.must('/v1/webhooks/endpoints', setup.admin_token, {
          name: `receiver ${path}`,
          url: `https://127.0.0.1:${receiver.port}${path}`,
        });
        secrets.set(path, ep.secret as string);
      }

      // Kill at KILL_AT arrivals, from the receipt callback (no polling gap); restart at once.
      const known = new Set<string>();
      let cutOff = 0; // POSTs that got no answer (in flight at the kill, or refused while down)
      let createdAtKill = -1;
      let killedAt = 0;
      let restartMs = 0;
      const first = server;
      const killed = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`only ${pairsSeen.size} pairs arrived in ${KILL_WAIT_MS} ms: no kill`)),
          KILL_WAIT_MS,
        );
        onProgress = () => {
          if (pairsSeen.size < KILL_AT) return;
          onProgress = undefined;
          clearTimeout(timer);
          first.child.kill('SIGKILL');
          killedAt = performance.now();
          createdAtKill = known.size;
          resolve();
        };
      });
      const restarted = killed.then(async () => {
        const exit = await first.exited;
        assert.equal(exit.signal, 'SIGKILL');
        const t0 = performance.now();
        server = await spawnGuard({ dataDir, port, caPath: pki.caPath, args });
        restartMs = performance.now() - t0;
      });
      restarted.catch(() => {}); // awaited below; a failure here must not be unhandled meanwhile

      // Create SIGNALS acknowledged signals; a POST cut off by the kill is retried (as a new signal).
      const createStart = performance.now();
      const creating = (async () => {
        const client = api as ApiClient;
        let next = 0;
        const worker = async () => {
          while (next < SIGNALS) {
            const i = next++;
            const deadline = performance.now() + 60_000;
            for (;;) {
              const r = await client.post('/v1/signals', agent.api_key, signalBody(i)).catch(() => undefined);
              if (r?.status === 201) {
                known.add(r.json.signal_id as string);
                break;
              }
              cutOff++;
              if (r && r.status < 500)
                throw new Error(`POST /v1/signals answered ${r.status}: ${JSON.stringify(r.json)}`);
              if (performance.now() > deadline) throw new Error('POST /v1/signals kept failing for 60 s');
              await sleep(50);
            }
          }
        };
        await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
      })();
      await creating;
      const createMs = performance.now() - createStart;
      await killed;
      await restarted;
      assert.equal(known.size, SIGNALS);

      // Wait (bounded) for every pair of every signal that exists: the acknowledged ones, and
      // any cut-off one that the receiver has shown to exist.
      const left = await waitForEveryPair(receipts, known, PATHS, RECOVERY_MAX_MS, 50);
      const recoveredMs = performance.now() - killedAt;
      assert.equal(left, 0, `${left} (signal, endpoint) pairs never arrived within ${RECOVERY_MAX_MS} ms of the kill`);
      // Stragglers (late duplicates, a last pair of a signal nobody acknowledged) land before the analysis.
      const queued = await waitForEmptyQueue(metricsUrl, RECOVERY_MAX_MS, 50);
      assert.equal(
        queued,
        0,
        `${queued} deliveries still waiting or in flight ${RECOVERY_MAX_MS} ms after every pair arrived`,
      );
      await (server as GuardProcess).stop('SIGTERM');

      // Analysis: pairs ↔ Guard-Delivery must be a bijection.
      const { pairs, orphans, duplicates, duplicatedPairs, counts } = assertOneIdPerPair(
        receipts,
        known,
        PATHS,
        cutOff,
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
      assert.equal(pairs, (known.size + orphans) * PATHS.length);

      // Signatures: a sample (duplicates first, then random others) verifies with the SDK.
      const sample = receipts.filter((r) => (counts.get(r.delivery) ?? 0) > 1).slice(0, SIGNATURE_SAMPLE / 2);
      while (sample.length < SIGNATURE_SAMPLE) sample.push(receipts[Math.floor(Math.random() * receipts.length)]);
      for (const r of sample) {
        const event = constructEvent(r.body, r.headers, secrets.get(r.path) as string, { toleranceSeconds: 600 });
        assert.equal(event.data.signal_id, r.signalId);
        assert.equal(r.headers[TIMESTAMP_HEADER], String(Math.floor(Date.parse(event.timestamp) / 1000)));
        const other = secrets.get(r.path === '/a' ? '/b' : '/a') as string;
        assert.throws(
          () => constructEvent(r.body, r.headers, other, { toleranceSeconds: 600 }),
          (e: unknown) => e instanceof WebhookVerificationError && e.code === 'signature_mismatch',
        );
      }

      const facts = [
        `signals acknowledged: ${known.size} (${createdAtKill} before the kill, created in ${Math.round(createMs)} ms); POSTs cut off by the kill: ${cutOff}; unacknowledged signals that exist and were delivered: ${orphans}`,
        `killed after ${KILL_AT} of ${PAIRS} pairs had arrived; restart to /healthz: ${Math.round(restartMs)} ms`,
        `recovery (SIGKILL → every pair arrived): ${Math.round(recoveredMs)} ms`,
        `receipts: ${receipts.length}; distinct pairs: ${pairs}; duplicates: ${duplicates} (over ${duplicatedPairs} pairs), all with their pair's Guard-Delivery`,
        `signatures verified with @guard/webhooks: ${sample.length}`,
      ];
      for (const f of facts) t.diagnostic(f);
    } finally {
      onProgress = undefined;
      await api?.close().catch(() => {});
      const s = server as GuardProcess | undefined;
      if (s && s.child.exitCode === null && s.child.signalCode === null) await s.stop('SIGKILL');
      await receiver?.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
