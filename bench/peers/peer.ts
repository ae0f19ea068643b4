// One peer webhook sender in a process of its own, forked by bench/peers.ts:
// `node bench/peers/peer.ts` with PEER_CONFIG (JSON, PeerConfig below) in its environment.
//
// What a Node team would build instead of Guard, minimal and honest:
//   - an HTTP ingest endpoint (node:http): POST /v1/signals with a bearer token, the same
//     signal JSON Guard takes, validated by hand to the same limits (signal_type, severity
//     1–5, description 1–4096 characters, identity_id and identity_name ≤ 200, optional
//     environment and created_at); answers 201 {signal_id} once the job is enqueued (the
//     library's own add call awaited), 400/401/413/503 otherwise;
//   - a worker that builds the same envelope as Guard's signal_created event, signs the raw
//     body with the same HMAC (Guard-Signature: sha256=<hex>, @guard/webhooks's sign) and
//     POSTs it with undici (keep-alive pool of CONCURRENCY connections) to the receiver; a
//     non-2xx answer or a network error throws, and the library retries per its own retry
//     mechanism (5 attempts in all, exponential backoff from 1 s where the library has it).
//   - GET /stats: counters (accepted, refused, attempts, failed attempts).
// `memory` runs the same ingest and worker on an array in this process, with no library and no
// store (inMemoryQueue): what is left of any such sender once its queue costs nothing.
//
// The libraries come from bench/peers/node_modules (bench/peers/package.json, bench-only),
// loaded by name at run time so the project's typecheck needs none of them.

import { randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { sign } from '@guard/webhooks';
import { Pool } from 'undici';

export type PeerSystem = 'graphile-worker' | 'pg-boss' | 'bullmq' | 'memory';

export interface PeerConfig {
  system: PeerSystem;
  /** PostgreSQL URL (graphile-worker, pg-boss). */
  database?: string;
  /** Redis port on 127.0.0.1 (bullmq). */
  redisPort?: number;
  /** https://127.0.0.1:PORT/hook */
  receiverUrl: string;
  caPem: string;
  secret: string;
  token: string;
  /** Deliveries in flight at most (Guard's per-endpoint default: 16). */
  concurrency: number;
}

/** The tuning each peer runs with, as bench/peers.ts prints it. */
export function peerTuning(system: PeerSystem, concurrency: number): string {
  switch (system) {
    case 'graphile-worker':
      return (
        `concurrency ${concurrency}, new jobs by LISTEN/NOTIFY (pollInterval 2000 ms, its default, only for retries), ` +
        `localQueue size ${concurrency + 1}, completeJobBatchDelay 0, failJobBatchDelay 0, maxPoolSize ${concurrency + 8}, maxAttempts 5`
      );
    case 'pg-boss':
      return (
        `2 workers (work()) × batchSize ${concurrency / 2} (perJobResults: each job settled on its own), burstWhenBatchFull, ` +
        'woken by notifyWorker after each send (no LISTEN/NOTIFY: it halved throughput), pollingIntervalSeconds 0.5 (its minimum), ' +
        'retryLimit 4, retryBackoff from 1 s, pool max 20'
      );
    case 'bullmq':
      return `Worker concurrency ${concurrency}, defaults otherwise (ioredis); attempts 5, exponential backoff from 1 s`;
    case 'memory':
      return `an array in the ingest's process, ${concurrency} in flight, attempts 5 with exponential backoff from 1 s; nothing stored`;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the libraries are loaded by name, untyped here
type Loose = any;

async function load(name: string): Promise<Loose> {
  let path: string;
  try {
    path = import.meta.resolve(name);
  } catch {
    throw new Error(`${name} is not installed: run \`npm ci --prefix bench/peers\` (npm run bench:peers does)`);
  }
  return import(path);
}

const MAX_BODY = 64 * 1024;
const PGBOSS_WORKERS = 2;

interface Signal {
  signal_type: string;
  severity: number;
  description: string;
  identity_id: string;
  identity_name: string;
  environment?: string;
  created_at?: string;
}

/** The same checks as Guard's schema for one signal; the reason when it fails. */
function invalid(s: unknown): string | undefined {
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return 'the body must be a JSON object';
  const o = s as Record<string, unknown>;
  const str = (k: string, min: number, max: number, optional = false) => {
    const v = o[k];
    if (v === undefined && optional) return undefined;
    if (typeof v !== 'string' || v.length < min || v.length > max) return `${k} must be a string of ${min}–${max}`;
    return undefined;
  };
  for (const k of Object.keys(o))
    if (
      !['signal_type', 'severity', 'description', 'identity_id', 'identity_name', 'environment', 'created_at'].includes(
        k,
      )
    )
      return `unknown property ${k}`;
  return (
    str('signal_type', 1, 100) ??
    (Number.isInteger(o.severity) && (o.severity as number) >= 1 && (o.severity as number) <= 5
      ? undefined
      : 'severity must be an integer 1–5') ??
    str('description', 1, 4096) ??
    str('identity_id', 0, 200) ??
    str('identity_name', 0, 200) ??
    str('environment', 0, 100, true) ??
    (o.created_at === undefined || (typeof o.created_at === 'string' && !Number.isNaN(Date.parse(o.created_at)))
      ? undefined
      : 'created_at must be a date-time')
  );
}

/** What a job carries: the signal as stored, ready to become an envelope. */
interface JobData {
  signal_id: string;
  tenant_id: string;
  signal_type: string;
  severity: number;
  description: string;
  server_id: string;
  server_name: string;
  identity_id: string;
  identity_name: string;
  environment: string;
  created_at: string;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.PEER_CONFIG ?? '{}') as PeerConfig;
  const stats = { accepted: 0, refused: 0, enqueueFailed: 0, attempts: 0, failedAttempts: 0 };
  const receiver = new URL(config.receiverUrl);
  const pool = new Pool(receiver.origin, {
    connections: config.concurrency,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: { ca: config.caPem, rejectUnauthorized: true },
  });

  /** One attempt: the envelope, signed, POSTed; throws on anything but 2xx. */
  const deliver = async (d: JobData, deliveryId: string): Promise<void> => {
    stats.attempts++;
    try {
      const sentAt = new Date();
      const body = JSON.stringify({
        event_type: 'signal_created',
        version: 'v1',
        timestamp: sentAt.toISOString(),
        tenant_id: d.tenant_id,
        data: {
          signal_id: d.signal_id,
          signal_type: d.signal_type,
          severity: d.severity,
          description: d.description,
          server_id: d.server_id,
          server_name: d.server_name,
          identity_id: d.identity_id,
          identity_name: d.identity_name,
          environment: d.environment,
          created_at: d.created_at,
        },
        console_url: `https://guard.example.com/console/signals/${d.signal_id}`,
      });
      const res = await pool.request({
        path: receiver.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Guard-Webhook/1.0',
          'guard-signature': sign(body, config.secret),
          'guard-event': 'signal_created',
          'guard-delivery': deliveryId,
          'guard-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        },
        body,
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      await res.body.dump();
      if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`the receiver answered ${res.statusCode}`);
    } catch (error) {
      stats.failedAttempts++;
      throw error;
    }
  };

  const enqueue = await startSystem(config, deliver);

  const expected = Buffer.from(`Bearer ${config.token}`);
  const server = http.createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (req.method === 'GET' && req.url === '/stats') return reply(200, stats);
    if (req.method !== 'POST' || req.url !== '/v1/signals') return reply(404, { error: 'not found' });
    const auth = Buffer.from(req.headers.authorization ?? '');
    if (auth.length !== expected.length || !timingSafeEqual(auth, expected)) {
      stats.refused++;
      return reply(401, { error: 'unauthorized' });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', async () => {
      if (size > MAX_BODY) {
        stats.refused++;
        return reply(413, { error: 'body too large' });
      }
      let signal: unknown;
      try {
        signal = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        stats.refused++;
        return reply(400, { error: 'the body is not JSON' });
      }
      const why = invalid(signal);
      if (why) {
        stats.refused++;
        return reply(400, { error: why });
      }
      const s = signal as Signal;
      const now = new Date().toISOString();
      const data: JobData = {
        signal_id: randomUUID(),
        tenant_id: 'bench-tenant',
        signal_type: s.signal_type,
        severity: s.severity,
        description: s.description,
        server_id: 'bench-agent',
        server_name: 'bench-1',
        identity_id: s.identity_id,
        identity_name: s.identity_name,
        environment: s.environment ?? 'production',
        created_at: s.created_at ?? now,
      };
      try {
        await enqueue(data);
      } catch (error) {
        stats.enqueueFailed++;
        return reply(503, { error: `could not enqueue: ${(error as Error).message}` });
      }
      stats.accepted++;
      reply(201, { signal_id: data.signal_id });
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ type: 'ready', port: (server.address() as net.AddressInfo).port });
  });
  process.on('disconnect', () => process.exit(0));
}

type Deliver = (d: JobData, deliveryId: string) => Promise<void>;

/** Starts the library's worker; returns the ingest's enqueue. */
async function startSystem(config: PeerConfig, deliver: Deliver): Promise<(d: JobData) => Promise<unknown>> {
  const c = config.concurrency;
  if (config.system === 'memory') return inMemoryQueue(c, deliver);
  if (config.system === 'graphile-worker') {
    const { run } = await load('graphile-worker');
    const runner = await run({
      connectionString: config.database,
      concurrency: c,
      maxPoolSize: c + 8,
      pollInterval: 2000,
      noHandleSignals: true,
      logger: quietGraphileLogger(await load('graphile-worker')),
      taskList: {
        deliver: async (payload: JobData, helpers: Loose) => deliver(payload, String(helpers.job.id)),
      },
      preset: { worker: { localQueue: { size: c + 1 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    });
    return (d) => runner.addJob('deliver', d, { maxAttempts: 5 });
  }
  if (config.system === 'pg-boss') {
    const { PgBoss } = await load('pg-boss');
    // PostgreSQL's LISTEN/NOTIFY (useListenNotify and a notify queue) halved pg-boss's
    // throughput here (a pg_notify in every send's transaction; measured alternately: 158 and
    // 182 deliveries/s against 333 and 351, 2.6 against 1.8 ms of CPU per delivery); the
    // ingest wakes its own workers in-process with notifyWorker instead, as Guard's ingest
    // wakes its delivery loop.
    const boss = new PgBoss({ connectionString: config.database, max: 20, schedule: false });
    boss.on('error', (e: Error) => console.error(`pg-boss: ${e.message}`));
    await boss.start();
    await boss.createQueue('deliver', { retryLimit: 4, retryDelay: 1, retryBackoff: true });
    const handler = async (jobs: { id: string; data: JobData }[]) => {
      const outcomes = await Promise.allSettled(jobs.map((j) => deliver(j.data, j.id)));
      return jobs.map((j, i) => ({
        id: j.id,
        status: outcomes[i].status === 'fulfilled' ? 'completed' : 'failed',
        output:
          outcomes[i].status === 'rejected'
            ? { error: String((outcomes[i] as PromiseRejectedResult).reason) }
            : undefined,
      }));
    };
    // Two work() calls rather than localConcurrency 2: notifyWorker wakes one work() id.
    const workers: string[] = [];
    for (let i = 0; i < PGBOSS_WORKERS; i++)
      workers.push(
        await boss.work(
          'deliver',
          { batchSize: c / PGBOSS_WORKERS, perJobResults: true, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 },
          handler,
        ),
      );
    return async (d) => {
      const id = await boss.send('deliver', d);
      for (const w of workers) boss.notifyWorker(w);
      return id;
    };
  }
  const { Queue, Worker } = await load('bullmq');
  const connection = { host: '127.0.0.1', port: config.redisPort };
  const queue = new Queue('deliver', { connection });
  const worker = new Worker('deliver', async (job: Loose) => deliver(job.data, String(job.id)), {
    connection: { ...connection, maxRetriesPerRequest: null },
    concurrency: c,
  });
  worker.on('error', (e: Error) => console.error(`bullmq worker: ${e.message}`));
  await worker.waitUntilReady();
  return (d) => queue.add('deliver', d, { attempts: 5, backoff: { type: 'exponential', delay: 1000 } });
}

/**
 * No library and no store: jobs wait in an array of this process and are lost with it. What is
 * left of any sender once its queue costs nothing: the floor of the HTTP ingest and the signed
 * POST, in one Node process.
 */
function inMemoryQueue(concurrency: number, deliver: Deliver): (d: JobData) => Promise<void> {
  interface Job {
    data: JobData;
    id: string;
    attempt: number;
  }
  const waiting: Job[] = [];
  let head = 0;
  let inFlight = 0;
  const pump = () => {
    while (inFlight < concurrency && head < waiting.length) {
      const job = waiting[head++];
      if (head > 1024 && head * 2 > waiting.length) {
        waiting.splice(0, head);
        head = 0;
      }
      inFlight++;
      deliver(job.data, job.id)
        .catch(() => {
          if (job.attempt < 5)
            setTimeout(
              () => {
                waiting.push({ ...job, attempt: job.attempt + 1 });
                pump();
              },
              1000 * 2 ** (job.attempt - 1),
            );
        })
        .finally(() => {
          inFlight--;
          pump();
        });
    }
  };
  return async (data) => {
    waiting.push({ data, id: randomUUID(), attempt: 1 });
    pump();
  };
}

/** graphile-worker's logger at warnings and errors only (its info lines are per job). */
function quietGraphileLogger(gw: Loose): Loose {
  return new gw.Logger(() => (level: string, message: string) => {
    if (level === 'error' || level === 'warning') console.error(`graphile-worker ${level}: ${message}`);
  });
}

if (process.env.PEER_CONFIG) {
  main().catch((error) => {
    console.error(
      `bench/peers/peer.ts (${process.env.PEER_CONFIG && JSON.parse(process.env.PEER_CONFIG).system}): ${error.stack ?? error}`,
    );
    process.exit(1);
  });
}
