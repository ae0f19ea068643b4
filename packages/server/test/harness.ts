// Test harness for guard-server integration tests: the real server on loopback (Fastify
// listening on 127.0.0.1:0, real SQLite in a throw-away data dir — or, in the PostgreSQL pass,
// a throw-away database of the run's cluster: test-database.ts —, real object files), a
// clock the tests move, and HTTP helpers that control every byte of a presigned PUT.
// No mocks: requests go over TCP with fetch or node:http.

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Agent } from 'undici';
import { hashSecret, newId, newSecret } from '../src/auth/secrets.ts';
import { loadServerConfig } from '../src/config.ts';
import type { Role } from '../src/db/tables.ts';
import type { AppDeps } from '../src/deps.ts';
import { type RunningServer, startServer } from '../src/server.ts';
import { runSetup, type SetupResult } from '../src/setup.ts';
import { type LocalS3, startLocalS3, useTestCredentials } from './s3-harness.ts';
import { databaseArgs, databaseFlags, dropTestDatabase } from './test-database.ts';

const execFileP = promisify(execFile);

export const SERVER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SERVER_BIN = join(SERVER_DIR, 'bin', 'guard-server');
export const MiB = 1024 * 1024;
/** Presigned URLs live 15 minutes (spec 8). */
export const PRESIGN_TTL_MS = 15 * 60 * 1000;
/** The fake clock starts here; tests move it. */
export const T0 = Date.parse('2026-11-21T10:00:00.000Z');

/** Response bodies are read loosely: tests assert on the fields they care about. */
// biome-ignore lint/suspicious/noExplicitAny: JSON bodies of responses under test
export type Loose = any;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Polls `cond` until it holds; fails with `what` after `timeoutMs`. The deadline only bounds a
 * failure: it is generous, so that a loaded machine never fails a wait that would have held.
 */
export async function waitFor(cond: () => Promise<boolean> | boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

// ---------------------------------------------------------------------------------------
// Clock

/** The injected clock: `now` is handed to startServer and runSetup. */
export class Clock {
  ms: number;
  constructor(ms = T0) {
    this.ms = ms;
  }
  now = (): Date => new Date(this.ms);
  advance(ms: number): void {
    this.ms += ms;
  }
}

// ---------------------------------------------------------------------------------------
// In-process server

export interface TestServer {
  /** http://127.0.0.1:<port> */
  url: string;
  dataDir: string;
  deps: AppDeps;
  clock: Clock;
  running: RunningServer;
  /** The vendor support token: runSetup returns it only on the first setup of a data dir. */
  supportToken: string | undefined;
  /** The local S3 behind the server (store 's3'); undefined with the embedded store. */
  s3: LocalS3 | undefined;
  /** Stops the server (idempotent); keeps the data dir. */
  stop(): Promise<void>;
  /** Stops the server and removes the data dir. */
  cleanup(): Promise<void>;
}

export async function makeTempDir(label: string): Promise<string> {
  return mkdtemp(join(os.tmpdir(), `guard-server-test-${label}-`));
}

/**
 * Starts the real server on 127.0.0.1:0 over a fresh temp data dir (or `dataDir`), with a
 * fake clock. The background collector runs hourly so tests that call it explicitly see
 * deterministic counts.
 */
export type StoreKind = 'fs' | 's3';

export async function startTestServer(
  options: { dataDir?: string; flags?: Record<string, string>; clock?: Clock; store?: StoreKind } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await makeTempDir('data'));
  const clock = options.clock ?? new Clock();
  // The S3 store: a local S3 (s3-harness.ts) that checks every presigned URL by the same clock.
  let s3: LocalS3 | undefined;
  if (options.store === 's3') {
    useTestCredentials();
    s3 = await startLocalS3({ now: clock.now });
  }
  const config = loadServerConfig(
    // No metrics listener unless a test asks for one (its default address is a fixed port).
    {
      'data-dir': dataDir,
      listen: '127.0.0.1:0',
      'gc-interval': '3600',
      'metrics-listen': '',
      ...(s3 ? { 'object-store': s3.objectStoreUrl } : {}),
      ...(await databaseFlags(dataDir)),
      ...options.flags,
    },
    {},
    process.cwd(),
  );
  const running = await startServer(config, { now: clock.now, logger: false });
  let stopped = false;
  const server: TestServer = {
    url: running.url,
    dataDir,
    deps: running.deps,
    clock,
    running,
    supportToken: undefined,
    s3,
    async stop() {
      if (stopped) return;
      stopped = true;
      // Close the test's own keep-alive connections first: a connection whose last response
      // was still finishing when close() ran would otherwise hold close() for Fastify's 72 s
      // keep-alive timeout (that shutdown behaviour has its own test in crash.test.ts).
      await closeClients(running.url);
      await running.close();
      await s3?.close();
    },
    async cleanup() {
      await server.stop();
      await dropTestDatabase(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** Creates a tenant with its admin, an enrolment token and (first time only) the support account. */
export async function setupTenant(server: TestServer): Promise<SetupResult> {
  const result = await runSetup(server.deps.db, server.clock.now);
  if (result.support_token) server.supportToken = result.support_token;
  return result;
}

// ---------------------------------------------------------------------------------------
// JSON API calls (fetch)

export interface ApiResult {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
  /** Parsed body, or undefined when it is not JSON. */
  json: Loose;
}

export interface ApiOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Serialised as JSON with content-type application/json. */
  body?: unknown;
  /** Sent as is (content-type from `headers`, if any). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

/** One keep-alive connection pool per server origin, so a test can close its connections. */
const clients = new Map<string, Agent>();

function clientFor(base: string): Agent {
  const origin = new URL(base).origin;
  let client = clients.get(origin);
  if (!client) {
    client = new Agent();
    clients.set(origin, client);
  }
  return client;
}

/** Closes the keep-alive connections api() holds to `base`. */
export async function closeClients(base: string): Promise<void> {
  const origin = new URL(base).origin;
  const client = clients.get(origin);
  clients.delete(origin);
  await client?.destroy();
}

export async function api(base: string, method: string, path: string, options: ApiOptions = {}): Promise<ApiResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Uint8Array<ArrayBuffer> | undefined =
    typeof options.rawBody === 'string' || options.rawBody === undefined
      ? options.rawBody
      : new Uint8Array(options.rawBody);
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body,
    redirect: 'manual',
    dispatcher: clientFor(base),
  } as RequestInit);
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: Loose;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, text, json };
}

/** Whether a body is exactly the API error shape {"error": {"code", "message"}}. */
export function isErrorShape(json: Loose): boolean {
  return (
    typeof json === 'object' &&
    json !== null &&
    typeof json.error === 'object' &&
    json.error !== null &&
    typeof json.error.code === 'string' &&
    /^[a-z][a-z0-9_]*$/.test(json.error.code) &&
    typeof json.error.message === 'string'
  );
}

export interface EnrolledAgent {
  api_key: string;
  agent_id: string;
  tenant_id: string;
}

export async function enrollAgent(
  base: string,
  enrollToken: string,
  extra: { hostname?: string; environment?: string; agent_version?: string } = {},
): Promise<EnrolledAgent> {
  const res = await api(base, 'POST', '/v1/agents/enroll', {
    body: { token: enrollToken, hostname: 'host-1.example', environment: 'test', agent_version: '0.1.0', ...extra },
  });
  if (res.status !== 201) throw new Error(`enroll answered ${res.status}: ${res.text}`);
  return res.json as EnrolledAgent;
}

export interface PresignRequest {
  filename?: string;
  size: number;
  sha256: string;
}

export function presign(base: string, apiKey: string, request: PresignRequest): Promise<ApiResult> {
  return api(base, 'POST', '/v1/support/bundle/upload-url', {
    token: apiKey,
    body: { filename: request.filename ?? 'bundle.tar.zst', size: request.size, sha256: request.sha256 },
  });
}

export interface RegisterRequest {
  object_key: string;
  sha256: string;
  size: number;
  manifest?: unknown;
}

export function register(base: string, apiKey: string, request: RegisterRequest): Promise<ApiResult> {
  return api(base, 'POST', '/v1/support/bundle/register', {
    token: apiKey,
    body: { manifest: validManifest(), ...request },
  });
}

/** A manifest that passes the contract (DESIGN §3 — manifest). */
export function validManifest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const log = 'time=2026-11-21T10:00:00Z level=INFO msg=hello api_key=[REDACTED]\n';
  return {
    bundle_version: 1,
    agent_version: '0.1.0',
    generated_at: '2026-11-21T09:59:00.000Z',
    trigger: 'cli',
    contents: [
      { name: 'agent.log', size: Buffer.byteLength(log), sha256: sha256Hex(log) },
      { name: 'system.json', size: 2, sha256: sha256Hex('{}') },
      { name: 'config.redacted.json', size: 2, sha256: sha256Hex('{}') },
    ],
    trimmed_segments: ['agent.log.3.gz'],
    redaction: {
      pattern: '^(api_key|enroll_token|.*_token|.*_secret)$',
      values_masked: 1,
      members: { 'agent.log': 1 },
    },
    collection_errors: [],
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------
// Presigned PUT (node:http: every header and byte under the test's control)

export interface PutOptions {
  /** Content-Length to send; default the body length; null: none (the body goes chunked). */
  contentLength?: number | null;
  headers?: Record<string, string>;
  chunkBytes?: number;
  /** Pause between chunks. */
  delayMs?: number;
  /** Send only this many bytes, run `beforeAbort`, then destroy the connection. */
  abortAfter?: number;
  beforeAbort?: () => Promise<void>;
  /** After this many bytes run `onPause`, then send the rest. */
  pauseAfter?: number;
  onPause?: () => Promise<void>;
  /** Default: no agent (one connection per request, `Connection: close`). */
  agent?: http.Agent;
}

export interface PutResult {
  /** undefined when no response arrived (connection reset, aborted by the test...). */
  status: number | undefined;
  /** Response headers ({} when no response arrived). */
  headers: http.IncomingHttpHeaders;
  text: string;
  json: Loose;
  error: Error | undefined;
}

export async function putObject(url: string, body: Buffer, options: PutOptions = {}): Promise<PutResult> {
  const u = new URL(url);
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream', ...options.headers };
  const contentLength = options.contentLength === undefined ? body.length : options.contentLength;
  if (contentLength !== null) headers['content-length'] = String(contentLength);
  const req = http.request({
    host: u.hostname,
    port: u.port,
    path: `${u.pathname}${u.search}`,
    method: 'PUT',
    headers,
    agent: options.agent ?? false,
  });
  if (contentLength === null) req.setHeader('transfer-encoding', 'chunked');
  const response = new Promise<PutResult>((resolveResult) => {
    let settled = false;
    const settle = (r: PutResult) => {
      if (!settled) {
        settled = true;
        resolveResult(r);
      }
    };
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const done = () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Loose;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        settle({ status: res.statusCode, headers: res.headers, text, json, error: undefined });
      };
      res.on('end', done);
      res.on('error', done);
      res.on('aborted', done);
    });
    req.on('error', (error) => settle({ status: undefined, headers: {}, text: '', json: undefined, error }));
    req.on('close', () =>
      settle({
        status: undefined,
        headers: {},
        text: '',
        json: undefined,
        error: new Error('connection closed without response'),
      }),
    );
  });
  const chunkBytes = options.chunkBytes ?? 256 * 1024;
  const limit = options.abortAfter === undefined ? body.length : Math.min(options.abortAfter, body.length);
  let paused = false;
  for (let off = 0; off < limit && !req.destroyed; ) {
    let end = Math.min(off + chunkBytes, limit);
    if (options.pauseAfter !== undefined && !paused && off < options.pauseAfter)
      end = Math.min(end, options.pauseAfter);
    const ok = req.write(body.subarray(off, end));
    off = end;
    if (!ok) await drainOrClose(req);
    if (options.pauseAfter !== undefined && !paused && off >= options.pauseAfter) {
      paused = true;
      await options.onPause?.();
    }
    if (options.delayMs) await sleep(options.delayMs);
  }
  if (options.abortAfter !== undefined) {
    await options.beforeAbort?.();
    req.destroy();
  } else if (!req.destroyed) req.end();
  return response;
}

function drainOrClose(req: http.ClientRequest): Promise<void> {
  return new Promise((r) => {
    const done = () => {
      req.off('drain', done);
      req.off('close', done);
      r();
    };
    req.on('drain', done);
    req.on('close', done);
  });
}

// ---------------------------------------------------------------------------------------
// Raw TCP (node:net): a peer that stops in the middle of a request, as a slow or hostile one does

export interface RawConnection {
  socket: net.Socket;
  /** Everything the server sent so far (latin1, so any byte survives). */
  received(): string;
  /** Resolves once the server has closed the connection; fails after `boundMs` (the test's bound). */
  closedWithin(boundMs: number, what: string): Promise<void>;
}

/** Opens a TCP connection to `base`'s host and port; the test writes the bytes itself. */
export async function rawConnection(base: string): Promise<RawConnection> {
  const u = new URL(base);
  const socket = net.connect(Number(u.port), u.hostname);
  await once(socket, 'connect');
  let data = '';
  socket.on('data', (c: Buffer) => {
    data += c.toString('latin1');
  });
  socket.on('error', () => {}); // a reset by the server is one way of closing
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  return {
    socket,
    received: () => data,
    async closedWithin(boundMs, what) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<'open'>((r) => {
        timer = setTimeout(() => r('open'), boundMs);
      });
      const outcome = await Promise.race([closed.then(() => 'closed' as const), bound]);
      clearTimeout(timer);
      if (outcome === 'open') {
        socket.destroy();
        throw new Error(`the connection was still open after ${boundMs} ms: ${what}`);
      }
    },
  };
}

/** Status line and parsed JSON body of a raw HTTP/1.1 response text (no chunked bodies). */
export function parseRawResponse(text: string): { status: number | undefined; json: Loose } {
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(text);
  const at = text.indexOf('\r\n\r\n');
  let json: Loose;
  try {
    json = JSON.parse(text.slice(at + 4));
  } catch {
    json = undefined;
  }
  return { status: status ? Number(status[1]) : undefined, json };
}

// ---------------------------------------------------------------------------------------
// Whole upload flow

export interface Uploaded {
  bytes: Buffer;
  sha256: string;
  object_key: string;
  url: string;
  bundle_id: string;
  uploaded_at: string;
}

/** presign → PUT → register; throws unless each step succeeds. */
export async function uploadBundle(
  base: string,
  apiKey: string,
  options: { size?: number; filename?: string; manifest?: unknown } = {},
): Promise<Uploaded> {
  const bytes = randomBytes(options.size ?? 4096);
  const sha256 = sha256Hex(bytes);
  const p = await presign(base, apiKey, { filename: options.filename, size: bytes.length, sha256 });
  if (p.status !== 200) throw new Error(`presign answered ${p.status}: ${p.text}`);
  const put = await putObject(p.json.url, bytes, { headers: p.json.headers });
  if (put.status !== 200) throw new Error(`PUT answered ${put.status}: ${put.text} ${put.error ?? ''}`);
  const r = await register(base, apiKey, {
    object_key: p.json.object_key,
    sha256,
    size: bytes.length,
    manifest: options.manifest ?? validManifest(),
  });
  if (r.status !== 201) throw new Error(`register answered ${r.status}: ${r.text}`);
  return { bytes, sha256, object_key: p.json.object_key, url: p.json.url, ...r.json };
}

// ---------------------------------------------------------------------------------------
// Data dir inspection

export function objectPath(dataDir: string, objectKey: string): string {
  return join(dataDir, 'objects', objectKey);
}

export async function objectExists(dataDir: string, objectKey: string): Promise<boolean> {
  return stat(objectPath(dataDir, objectKey)).then(
    () => true,
    () => false,
  );
}

/** Names in objects/.partial (leftovers of unfinished PUTs). */
export async function partialFiles(dataDir: string): Promise<string[]> {
  return readdir(join(dataDir, 'objects', '.partial')).catch(() => []);
}

// ---------------------------------------------------------------------------------------
// The real bin/guard-server in a child process

export { freePort, refusedUrl } from './loopback.ts';

/** `guard-server setup --data-dir DIR --json`: one JSON object on stdout. */
export async function setupCli(dataDir: string): Promise<SetupResult> {
  const db = await databaseArgs(dataDir, { migrate: false });
  const { stdout } = await execFileP(SERVER_BIN, ['setup', '--data-dir', dataDir, ...db, '--json']);
  return JSON.parse(stdout) as SetupResult;
}

export interface SpawnedServer {
  child: ChildProcess;
  url: string;
  port: number;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves once the process exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns bin/guard-server and waits until /healthz answers. Its metrics listener takes a free
 * port (the start banner names it) unless `extraArgs` say otherwise.
 */
export async function spawnServer(dataDir: string, port: number, extraArgs: string[] = []): Promise<SpawnedServer> {
  const args = [
    '--data-dir',
    dataDir,
    '--listen',
    `127.0.0.1:${port}`,
    '--metrics-listen',
    '127.0.0.1:0',
    ...(await databaseArgs(dataDir)),
  ];
  const child = spawn(SERVER_BIN, [...args, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  let gone = false;
  exited.then(() => {
    gone = true;
  });
  await waitFor(
    async () => {
      if (gone) throw new Error(`guard-server exited before it was ready:\n${out}`);
      try {
        return (await fetch(`${url}/healthz`)).status === 200;
      } catch {
        return false;
      }
    },
    'guard-server to answer /healthz',
    20_000,
  );
  return { child, url, port, output: () => out, exited };
}

/** Sends `signal` to a spawned server (by its pid) and waits for it to exit. */
export async function stopSpawned(server: SpawnedServer, signal: NodeJS.Signals = 'SIGTERM') {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill(signal);
  return server.exited;
}

// ---------------------------------------------------------------------------------------
// Extra principals

/** Adds a user with an API token straight to the database (the API has no user management yet). */
export async function addUser(
  server: { deps: Pick<TestServer['deps'], 'db'>; clock: { now(): Date } },
  tenantId: string | null,
  role: Role,
): Promise<string> {
  const token = newSecret('userToken');
  const userId = newId('u');
  const at = server.clock.now().toISOString();
  await server.deps.db
    .insertInto('users')
    .values({
      id: userId,
      tenant_id: tenantId,
      email: `${userId}@test.local`,
      role,
      password_hash: '!',
      created_at: at,
    })
    .execute();
  await server.deps.db
    .insertInto('api_tokens')
    .values({
      id: newId('tok'),
      user_id: userId,
      token_hash: hashSecret(token),
      name: 'test',
      created_at: at,
      revoked_at: null,
    })
    .execute();
  return token;
}
