// Test harness for webhook delivery: the real guard-server in-process (SQLite in a temp data
// dir, the real delivery worker and undici client), real HTTPS receivers on loopback with a
// certificate signed by a throw-away CA, a clock that follows real time (tests can move it
// forward) and helpers for the endpoint API.
//
// Certificates are generated with `openssl` at test start rather than checked in: nothing
// expires in the repository, no private key is committed, and each run trusts only its own
// CA. Generation takes a few tens of milliseconds.
//
// Network safety: receivers listen on 127.0.0.1 or ::1 only; the only hostname used is
// `localhost`. Non-loopback addresses appear only as endpoint URLs on a server with
// --webhook-allow-private off, where the SSRF guard refuses them before connecting.

import { execFile } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { loadServerConfig } from '../src/config.ts';
import type { Role } from '../src/db/tables.ts';
import { timeOrderedId, timeOrderedUuid } from '../src/kernel/ids.ts';
import { type RunningServer, startServer } from '../src/server.ts';
import { runSetup } from '../src/setup.ts';
import { type ApiResult, addUser, api, enrollAgent, type Loose, sleep } from './harness.ts';
import { databaseFlags, dropTestDatabase } from './test-database.ts';

const _execFileP = promisify(execFile);

export { makeTestTls, type TestTls } from './loopback.ts';

// ---------------------------------------------------------------------------------------
// Clock and server

/** Real time plus an offset the test may move forward: retries still come due by themselves. */
export class LiveClock {
  offsetMs = 0;
  now = (): Date => new Date(Date.now() + this.offsetMs);
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/** Fast delivery settings for tests; any of them can be overridden. */
export const FAST_WEBHOOK_FLAGS: Record<string, string | boolean> = {
  'webhook-allow-private': true,
  'webhook-retry-schedule': '0,200ms,400ms',
  // The service's own default: a loaded machine can take over a second to open a TLS
  // connection to a receiver in the test process, and a timed-out attempt is a retry (or, with
  // no retry left, a failed delivery) that the test did not ask for. Tests of the timeout
  // itself set a short one on a server of their own.
  'webhook-timeout-ms': '10000',
  'webhook-poll-ms': '20',
  'webhook-endpoint-concurrency': '4',
  'gc-interval': '3600',
  'metrics-listen': '127.0.0.1:0', // /metrics has its own listener: a free port per server
};

export interface WebhookServer {
  /** http://127.0.0.1:<port> */
  url: string;
  dataDir: string;
  clock: LiveClock;
  running: RunningServer;
  deps: RunningServer['deps'];
  /** Stops the server and removes its data dir (idempotent). */
  close(): Promise<void>;
}

export async function startWebhookServer(options: {
  caPem: string;
  flags?: Record<string, string | boolean>;
  /** Start on this data dir (a restart); the caller removes it, close() leaves it. */
  dataDir?: string;
  /** Environment the configuration reads (OTEL_* for tracing); none by default. */
  env?: NodeJS.ProcessEnv;
}): Promise<WebhookServer> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(os.tmpdir(), 'guard-webhook-data-')));
  const clock = new LiveClock();
  const config = loadServerConfig(
    {
      'data-dir': dataDir,
      listen: '127.0.0.1:0',
      ...FAST_WEBHOOK_FLAGS,
      ...(await databaseFlags(dataDir)),
      ...options.flags,
    },
    options.env ?? {},
    process.cwd(),
  );
  const running = await startServer(config, { now: clock.now, logger: false, deliveryCa: [options.caPem] });
  let closed = false;
  return {
    url: running.url,
    dataDir,
    clock,
    running,
    deps: running.deps,
    async close() {
      if (closed) return;
      closed = true;
      await running.close();
      if (ownDir) {
        await dropTestDatabase(dataDir);
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  };
}

// ---------------------------------------------------------------------------------------
// Tenants and principals

export interface Tenant {
  tenantId: string;
  adminToken: string;
  agentKey: string;
  agentId: string;
  hostname: string;
  environment: string;
}

let tenantSeq = 0;

/** A new tenant with its admin and one enrolled agent (hostname and environment recorded). */
export async function newTenant(server: WebhookServer): Promise<Tenant> {
  const setup = await runSetup(server.deps.db, server.clock.now);
  tenantSeq++;
  const hostname = `web-${String(tenantSeq).padStart(2, '0')}.internal.example`;
  const environment = 'production';
  const agent = await enrollAgent(server.url, setup.enroll_token, { hostname, environment });
  return {
    tenantId: setup.tenant_id,
    adminToken: setup.admin_token,
    agentKey: agent.api_key,
    agentId: agent.agent_id,
    hostname,
    environment,
  };
}

/** A user with `role` and an API token, inserted straight into the database (harness.ts). */
export function addUserToken(server: WebhookServer, tenantId: string | null, role: Role): Promise<string> {
  return addUser(server, tenantId, role);
}

// ---------------------------------------------------------------------------------------
// API helpers

export interface CreatedEndpoint {
  id: string;
  secret: string;
  url: string;
  name: string;
  headers: Record<string, string>;
}

export async function createEndpoint(
  server: WebhookServer,
  token: string,
  body: { name?: string; url: string; headers?: Record<string, string> } & Record<string, unknown>,
): Promise<CreatedEndpoint> {
  const res = await api(server.url, 'POST', '/v1/webhooks/endpoints', {
    token,
    body: { ...body, name: body.name ?? 'test endpoint' },
  });
  if (res.status !== 201) throw new Error(`creating the endpoint answered ${res.status}: ${res.text}`);
  return res.json as CreatedEndpoint;
}

export const SIGNAL = {
  signal_type: 'sudo_command_executed',
  severity: 4,
  description: 'alice ran sudo /usr/bin/apt-get install netcat',
  identity_id: 'uid-1000',
  identity_name: 'alice',
};

export function postSignal(server: WebhookServer, agentKey: string, body: Record<string, unknown> = {}) {
  return api(server.url, 'POST', '/v1/signals', { token: agentKey, body: { ...SIGNAL, ...body } });
}

export async function createSignal(
  server: WebhookServer,
  agentKey: string,
  body: Record<string, unknown> = {},
): Promise<{ signal_id: string; deliveries: number }> {
  const res = await postSignal(server, agentKey, body);
  if (res.status !== 201) throw new Error(`creating the signal answered ${res.status}: ${res.text}`);
  return res.json;
}

export async function listDeliveries(server: WebhookServer, token: string, endpointId: string): Promise<Loose[]> {
  const res = await api(server.url, 'GET', `/v1/webhooks/endpoints/${endpointId}/deliveries?limit=500`, { token });
  if (res.status !== 200) throw new Error(`listing deliveries answered ${res.status}: ${res.text}`);
  return res.json.deliveries;
}

export async function getDelivery(server: WebhookServer, token: string, id: string): Promise<Loose> {
  const res = await api(server.url, 'GET', `/v1/webhooks/deliveries/${id}`, { token });
  if (res.status !== 200) throw new Error(`reading delivery ${id} answered ${res.status}: ${res.text}`);
  return res.json;
}

/** Polls a delivery until `pred` holds; returns it. */
export async function waitForDelivery(
  server: WebhookServer,
  token: string,
  id: string,
  pred: (d: Loose) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<Loose> {
  const deadline = Date.now() + timeoutMs;
  let last: Loose;
  for (;;) {
    last = await getDelivery(server, token, id);
    if (pred(last)) return last;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for delivery ${what}; last: ${JSON.stringify(last)}`);
    await sleep(25);
  }
}

export function apiCall(
  server: WebhookServer,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<ApiResult> {
  return api(server.url, method, path, { token, body });
}

/** Prometheus text → sample name with labels (as printed) → value. */
export async function scrapeMetrics(server: WebhookServer): Promise<Map<string, number>> {
  if (!server.running.metricsUrl) throw new Error('this server serves no /metrics (--metrics-listen)');
  const res = await fetch(server.running.metricsUrl);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  const out = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\S+?(?:\{[^}]*\})?)\s+(\S+)$/.exec(line);
    if (m) out.set(m[1], Number(m[2]));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Independent signature check (what a careful receiver writes without the SDK)

/** HMAC-SHA256 over the raw bytes, compared in constant time with the header. */
export function independentlyVerified(rawBody: Buffer, header: string | undefined, secret: string): boolean {
  if (header === undefined || !/^sha256=[0-9a-f]{64}$/.test(header)) return false;
  const want = Buffer.from(`sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest('hex')}`);
  const got = Buffer.from(header);
  return want.length === got.length && timingSafeEqual(want, got);
}

// ---------------------------------------------------------------------------------------
// HTTPS receiver

export interface ReceivedRequest {
  /** 1-based order of arrival over the whole receiver. */
  seq: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Header names exactly as sent, for checks of duplicates. */
  rawHeaders: string[];
  /** The raw body bytes as received: what the signature covers. */
  body: Buffer;
  /** Date.now() when the body was complete. */
  at: number;
  /** The subject CN of the client certificate the sender presented (mTLS), if any. */
  clientCertificateCn?: string;
}

export type Reply = { status?: number; headers?: Record<string, string>; body?: string | Buffer } | 'hang';
/** Decides the answer to one request; `nth` counts the requests to this path (1-based). */
export type Responder = (req: ReceivedRequest, nth: number) => Reply | Promise<Reply>;

export class Receiver {
  readonly server: https.Server;
  readonly hits: ReceivedRequest[] = [];
  private readonly routes = new Map<string, Responder>();
  private readonly counts = new Map<string, number>();

  private constructor(server: https.Server) {
    this.server = server;
  }

  /**
   * Listens on `host` (127.0.0.1 or ::1 only) on a free port. `tls` may ask for a client
   * certificate (`requestCert`, `ca`, `rejectUnauthorized`: mTLS).
   */
  static async start(
    tls: { key: string; cert: string } & https.ServerOptions,
    host: '127.0.0.1' | '::1' = '127.0.0.1',
  ): Promise<Receiver> {
    const server = https.createServer({ keepAlive: true, ...tls });
    const receiver = new Receiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = (req.url ?? '/').split('?')[0];
        const hit: ReceivedRequest = {
          seq: receiver.hits.length + 1,
          method: req.method ?? '',
          path,
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body: Buffer.concat(chunks),
          at: Date.now(),
        };
        const peer = (req.socket as TLSSocket).getPeerCertificate?.();
        if (peer?.subject?.CN) hit.clientCertificateCn = String(peer.subject.CN);
        receiver.hits.push(hit);
        const nth = (receiver.counts.get(path) ?? 0) + 1;
        receiver.counts.set(path, nth);
        const responder: Responder = receiver.routes.get(path) ?? (() => ({ status: 200, body: '{"ok":true}' }));
        Promise.resolve(responder(hit, nth)).then(
          (reply) => {
            if (reply === 'hang' || res.destroyed) return;
            res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
            res.end(reply.body ?? '');
          },
          () => res.destroy(),
        );
      });
    });
    server.listen(0, host);
    await once(server, 'listening');
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** https://127.0.0.1:<port><path> (or https://[::1]:<port><path>). */
  url(path: string): string {
    const a = this.server.address() as AddressInfo;
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `https://${host}:${a.port}${path}`;
  }

  /** https://localhost:<port><path>: the certificate's DNS name. */
  localhostUrl(path: string): string {
    return `https://localhost:${this.port}${path}`;
  }

  on(path: string, responder: Responder): this {
    this.routes.set(path, responder);
    return this;
  }

  hitsFor(path: string): ReceivedRequest[] {
    return this.hits.filter((h) => h.path === path);
  }

  async waitForHits(path: string, n: number, timeoutMs = 20_000): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hits = this.hitsFor(path);
      if (hits.length >= n) return hits;
      if (Date.now() > deadline)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${n} hits on ${path}; got ${hits.length}`);
      await sleep(10);
    }
  }

  /** Closes the listener and every connection, hanging requests included. */
  async close(): Promise<void> {
    const closed = new Promise((r) => this.server.close(r));
    this.server.closeAllConnections();
    await closed;
  }
}

/** Parses a received body as JSON. */
export function bodyJson(hit: ReceivedRequest): Loose {
  return JSON.parse(hit.body.toString('utf8'));
}

// ---------------------------------------------------------------------------------------
// Replays

/** `n` succeeded deliveries of one endpoint, written straight into the database (signals included), created at `createdAt` (half a second ago by default): a replay's material without sending anything first. */
export async function seedDeliveries(
  server: { deps: Pick<WebhookServer['deps'], 'db'> },
  tenantId: string,
  endpointId: string,
  n: number,
  createdAt = new Date(Date.now() - 500),
) {
  const db = server.deps.db;
  const at = createdAt.toISOString();
  for (let i = 0; i < n; i += 500) {
    const signals = Array.from({ length: Math.min(500, n - i) }, () => ({
      id: timeOrderedId('sig'),
      tenant_id: tenantId,
      agent_id: null,
      server_id: 'srv',
      server_name: 'seeded',
      signal_type: 'sudo_command_executed',
      severity: 3,
      description: 'seeded for a replay',
      identity_id: 'u',
      identity_name: 'u',
      environment: 'test',
      created_at: at,
      received_at: at,
      is_test: 0,
      event_type: 'signal_created',
      event_data: null,
    }));
    await db.insertInto('signals').values(signals).execute();
    await db
      .insertInto('webhook_deliveries')
      .values(
        signals.map((s) => ({
          id: timeOrderedUuid(Date.parse(at)),
          tenant_id: tenantId,
          signal_id: s.id,
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
}
