// Shared by bench/webhooks.ts and packages/server/test/delivery-crash.test.ts: a throw-away
// test CA and a localhost/127.0.0.1 server certificate (openssl), an HTTPS webhook receiver
// on loopback, the real bin/guard-server as a child process trusting that CA through
// NODE_EXTRA_CA_CERTS, and a small JSON client for the /v1 API (undici, keep-alive).
// Loopback only; every wait is bounded.

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import https from 'node:https';
import type net from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sign } from '@guard/webhooks';
import { Pool } from 'undici';
import { makeTestTls } from '../packages/server/test/loopback.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SERVER_BIN = join(ROOT, 'packages/server/bin/guard-server');

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Monotonic nanoseconds; CLOCK_MONOTONIC is system-wide on Linux, so it compares across processes. */
export const nowNs = (): bigint => process.hrtime.bigint();
export const usNow = (): number => Number(nowNs() / 1000n);

/**
 * POSTs `total` signals at `rate` a second, paced by the clock (not by the responses: a slow
 * server does not slow the arrivals); `post(k)` sends the k-th. Returns when every response
 * is in: each signal's send time (µs, usNow), its id, the start and the paced duration.
 * Throws when any POST failed.
 */
export async function postSignalsPaced(
  total: number,
  rate: number,
  post: (k: number) => Promise<JsonResult>,
): Promise<{ sentUs: number[]; ids: string[]; t0: number; pacedS: number }> {
  const sentUs = new Array<number>(total);
  const ids = new Array<string>(total);
  const posts: Promise<void>[] = [];
  let failed = 0;
  const t0 = usNow();
  let i = 0;
  while (i < total) {
    const due = Math.min(total, Math.floor(((usNow() - t0) / 1e6) * rate) + 1);
    while (i < due) {
      const k = i++;
      sentUs[k] = usNow();
      posts.push(
        post(k).then(
          (r) => {
            if (r.status === 201) ids[k] = r.json.signal_id;
            else failed++;
          },
          () => {
            failed++;
          },
        ),
      );
    }
    await sleep(1);
  }
  const pacedS = (usNow() - t0) / 1e6;
  await Promise.all(posts);
  if (failed > 0) throw new Error(`${failed} POST /v1/signals failed`);
  return { sentUs, ids, t0, pacedS };
}

// ---------------------------------------------------------------------------------------
// TLS material

export interface TestPki {
  /** PEM file of the CA: what NODE_EXTRA_CA_CERTS points at. */
  caPath: string;
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** A throw-away test CA and a server certificate for localhost (the server tests' own), the CA also as a file. */
export async function createTestPki(dir: string): Promise<TestPki> {
  const tls = await makeTestTls();
  const caPath = join(dir, 'ca.pem');
  writeFileSync(caPath, tls.caPem);
  return { caPath, caPem: tls.caPem, certPem: tls.cert, keyPem: tls.key };
}

// ---------------------------------------------------------------------------------------
// HTTPS webhook receiver

export interface Receipt {
  path: string;
  /** Guard-Delivery header. */
  delivery: string;
  /** data.signal_id of the envelope ('' when the body is not an envelope). */
  signalId: string;
  /** nowNs() when the whole body had arrived. */
  receivedNs: bigint;
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

export interface Receiver {
  port: number;
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1:0 and answers every POST 200 (after a random delay in
 * [delayMs[0], delayMs[1]] ms when given), handing each request to `onReceipt`.
 */
export async function startReceiver(options: {
  pki: Pick<TestPki, 'certPem' | 'keyPem'>;
  onReceipt(r: Receipt): void;
  delayMs?: [number, number];
  /** Called as each request arrives (by path); the function it returns, once its answer is gone. */
  onStart?(path: string): () => void;
}): Promise<Receiver> {
  const server = https.createServer(
    { key: options.pki.keyPem, cert: options.pki.certPem, keepAliveTimeout: 60_000 },
    (req, res) => {
      // Done once the answer is handed to the socket (or the request is gone): a client can
      // only send its next request after reading this answer, so nothing it does next can
      // overlap this one in the count, however late this process gets to its 'close' event.
      const finish = options.onStart?.(req.url ?? '');
      let finished = false;
      const done = () => {
        if (finished) return;
        finished = true;
        finish?.();
      };
      res.once('close', done);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const receivedNs = nowNs();
        const body = Buffer.concat(chunks);
        let signalId = '';
        try {
          signalId = String(JSON.parse(body.toString('utf8'))?.data?.signal_id ?? '');
        } catch {
          // not an envelope: recorded with an empty signal id
        }
        const delivery = req.headers['guard-delivery'];
        options.onReceipt({
          path: req.url ?? '',
          delivery: typeof delivery === 'string' ? delivery : '',
          signalId,
          receivedNs,
          body,
          headers: req.headers,
        });
        const answer = () => {
          done();
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
          res.end('ok');
        };
        const d = options.delayMs;
        if (d && d[1] > 0) setTimeout(answer, d[0] + Math.random() * (d[1] - d[0]));
        else answer();
      });
    },
  );
  server.headersTimeout = 30_000;
  server.requestTimeout = 30_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// ---------------------------------------------------------------------------------------
// The real guard-server

export { freePort } from '../packages/server/test/loopback.ts';

export interface SetupJson {
  tenant_id: string;
  admin_token: string;
  enroll_token: string;
}

/** `guard-server setup --data-dir DIR --json` (and `extraArgs`, e.g. --database URL). */
export function guardSetup(dataDir: string, extraArgs: string[] = []): SetupJson {
  const out = execFileSync(SERVER_BIN, ['setup', '--data-dir', dataDir, ...extraArgs, '--json'], { encoding: 'utf8' });
  return JSON.parse(out) as SetupJson;
}

export interface GuardProcess {
  child: ChildProcess;
  url: string;
  pid: number;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (to this child's pid only) and waits, at most 10 s, for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Spawns bin/guard-server on 127.0.0.1:`port` with `--webhook-allow-private --log-level warn`
 * and NODE_EXTRA_CA_CERTS=`caPath`, and waits (at most `readyMs`) until /healthz answers 200.
 */
export async function spawnGuard(options: {
  dataDir: string;
  port: number;
  caPath: string;
  args?: string[];
  nodeOptions?: string;
  readyMs?: number;
  /** Another build of the server to run (default: packages/server/bin/guard-server). */
  bin?: string;
  /** A command that execs the server, run in front of it (e.g. nsenter into a namespace): the pid stays the server's. */
  wrapper?: string[];
}): Promise<GuardProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: options.caPath };
  // GUARD_BENCH_SERVER_NODE_OPTIONS: e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the server.
  const nodeOptions = options.nodeOptions ?? process.env.GUARD_BENCH_SERVER_NODE_OPTIONS;
  if (nodeOptions) env.NODE_OPTIONS = nodeOptions;
  else delete env.NODE_OPTIONS;
  const wrapper = options.wrapper ?? [];
  const child = spawn(
    wrapper[0] ?? options.bin ?? SERVER_BIN,
    [
      ...wrapper.slice(1),
      ...(wrapper.length > 0 ? [options.bin ?? SERVER_BIN] : []),
      '--data-dir',
      options.dataDir,
      '--listen',
      `127.0.0.1:${options.port}`,
      '--webhook-allow-private',
      '--log-level',
      'warn',
      ...(options.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  let out = '';
  const keep = (c: Buffer) => {
    out += c.toString('utf8');
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + (options.readyMs ?? 20_000);
  for (;;) {
    if (gone) throw new Error(`guard-server exited before it was ready:\n${out}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`guard-server did not answer /healthz within ${options.readyMs ?? 20_000} ms:\n${out}`);
    }
    await sleep(25);
  }
  return {
    child,
    url,
    pid: child.pid as number,
    output: () => out,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

// ---------------------------------------------------------------------------------------
// /v1 JSON client

export interface JsonResult {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers, read loosely
  json: any;
}

export class ApiClient {
  readonly pool: Pool;
  constructor(base: string, connections: number) {
    this.pool = new Pool(base, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  }

  async post(path: string, token: string | undefined, body: unknown): Promise<JsonResult> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await this.pool.request({
      path,
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.statusCode, json };
  }

  /** POST that must answer `status`; throws with the body otherwise. */
  async must(path: string, token: string | undefined, body: unknown, status = 201): Promise<JsonResult['json']> {
    const r = await this.post(path, token, body);
    if (r.status !== status) throw new Error(`POST ${path} answered ${r.status}: ${JSON.stringify(r.json)}`);
    return r.json;
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}

/** A realistic signal body for POST /v1/signals (≈ the size agents send). */
export function signalBody(i: number): Record<string, unknown> {
  return {
    signal_type: 'sudo_command_executed',
    severity: 1 + (i % 5),
    description: `User ops-${i % 97} ran "systemctl restart nginx" via sudo on a production host (event ${i})`,
    identity_id: `u-${(i * 7919) % 100000}`,
    identity_name: `ops-${i % 97}@example.com`,
  };
}

/** Runs `fn(0..n-1)` with at most `concurrency` calls in flight. */
export async function runPool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
}

/** POSTs a body as Guard delivers it (the same headers, signed per request): the raw loops' one request; its status. */
export async function signedPost(
  pool: Pool,
  path: string,
  body: string,
  secret: string,
  sentAt: Date,
): Promise<number> {
  const res = await pool.request({
    path,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Guard-Webhook/1.0',
      'guard-signature': sign(body, secret),
      'guard-event': 'signal_created',
      'guard-delivery': crypto.randomUUID(),
      'guard-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    },
    body,
  });
  await res.body.dump();
  return res.statusCode;
}
