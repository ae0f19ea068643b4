// Test harness for `guard-agent enroll` and `support-bundle upload`: the real guard-server
// in-process on loopback (startServer + runSetup, real SQLite and object files), stand-in
// services of our own (node:http / node:https) whose every answer a test scripts, a CONNECT
// forward proxy that counts tunnels and bytes, and the real bin/guard-agent in a child
// process. No mocks of the agent's code.

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadServerConfig } from '../../server/src/config.ts';
import { type RunningServer, startServer } from '../../server/src/server.ts';
import { runSetup, type SetupResult } from '../../server/src/setup.ts';
import { BIN, childEnv, type Home, type RunResult, UNPRIVILEGED, watch } from './harness.ts';

const execFileP = promisify(execFile);

/** Response bodies are read loosely: tests assert on the fields they care about. */
// biome-ignore lint/suspicious/noExplicitAny: JSON bodies of responses under test
export type Loose = any;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Polls `cond` until it holds; fails naming `what` after `timeoutMs`. */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

// ---------------------------------------------------------------------------------------
// The real guard-server

export interface GuardServer {
  server: RunningServer;
  url: string;
  setup: SetupResult;
  /** Every HTTP request the server received, in order ("METHOD /path"). */
  requests: string[];
  /** Rows of the uploads table (presigns). */
  uploadCount(): Promise<number>;
  close(): Promise<void>;
}

/**
 * `objectStore`: the server's --object-store (an S3 store); default the embedded one. `flags`:
 * more of the server's settings (flag name → value).
 */
export async function startGuardServer(
  dataDir: string,
  options: { objectStore?: string; flags?: Record<string, string> } = {},
): Promise<GuardServer> {
  const flags: Record<string, string> = {
    'data-dir': dataDir,
    listen: '127.0.0.1:0',
    'log-level': 'silent',
    'metrics-listen': '',
    ...options.flags,
  };
  if (options.objectStore) flags['object-store'] = options.objectStore;
  const config = loadServerConfig(flags, {}, dataDir);
  const now = () => new Date();
  const server = await startServer(config, { now, logger: false });
  const requests: string[] = [];
  // A listener on the node server itself: it sees every request, before Fastify routes it.
  server.app.server.on('request', (req: http.IncomingMessage) => {
    requests.push(`${req.method} ${(req.url ?? '').split('?')[0]}`);
  });
  const setup = await runSetup(server.deps.db, now);
  return {
    server,
    url: server.url,
    setup,
    requests,
    async uploadCount() {
      const rows = await server.deps.db.selectFrom('uploads').select('object_key').execute();
      return rows.length;
    },
    close: () => server.close(),
  };
}

/** GET with a bearer token from the test process (fetch: nothing of the agent's code). */
export async function apiGet(url: string, token: string): Promise<Response> {
  return fetch(url, { headers: { authorization: `Bearer ${token}` } });
}

// ---------------------------------------------------------------------------------------
// Running the agent

/** Proxy variables set empty: no inherited proxy. */
export const NO_PROXY_ENV: Record<string, string> = {
  http_proxy: '',
  HTTP_PROXY: '',
  https_proxy: '',
  HTTPS_PROXY: '',
  no_proxy: '',
  NO_PROXY: '',
};

/** Both spellings of each proxy variable, as a user's shell might set them. */
export function proxyEnv(p: { http?: string; https?: string; no?: string }): Record<string, string> {
  return {
    http_proxy: p.http ?? '',
    HTTP_PROXY: p.http ?? '',
    https_proxy: p.https ?? '',
    HTTPS_PROXY: p.https ?? '',
    no_proxy: p.no ?? '',
    NO_PROXY: p.no ?? '',
  };
}

export interface AgentRun {
  child: ChildProcess;
  pid: number;
  result: Promise<RunResult>;
}

export interface AgentRunOptions {
  env?: Record<string, string>;
  stdin?: string;
  timeoutMs?: number;
  cwd?: string;
  /** Run without root's power over file modes (harness.ts UNPRIVILEGED). */
  unprivileged?: boolean;
}

/**
 * Starts bin/guard-agent (sh execs it, and it execs node: the PID is node's, so signals
 * reach the agent itself). `stdin` is written and closed when given; else stdin is /dev/null.
 */
export function startAgent(args: string[], options: AgentRunOptions = {}): AgentRun {
  const t0 = Date.now();
  const [cmd, ...rest] = [
    ...(options.unprivileged ? UNPRIVILEGED : []),
    'sh',
    '-c',
    'umask 022; exec "$0" "$@"',
    BIN,
    ...args,
  ];
  const child = spawn(cmd as string, rest, {
    cwd: options.cwd ?? os.tmpdir(),
    env: childEnv({ ...NO_PROXY_ENV, ...options.env }),
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  return watch(child, t0, options.timeoutMs);
}

export function runAgent(args: string[], options: AgentRunOptions = {}): Promise<RunResult> {
  return startAgent(args, options).result;
}

/**
 * Runs the agent as the foreground child of an outer `sh` that prints `rc=$?` afterwards
 * (what a calling script sees). The inner sh writes its PID to `pidFile`, then execs the
 * bin (which execs node): that PID is node's and can be signalled alone.
 */
export function startAgentUnderShell(args: string[], pidFile: string, env: Record<string, string> = {}): AgentRun {
  const t0 = Date.now();
  const script = `umask 022; sh -c 'echo $$ > "$1"; shift; exec "$@"' inner "$@"; echo "rc=$?"`;
  const child = spawn('sh', ['-c', script, 'outer', pidFile, BIN, ...args], {
    cwd: os.tmpdir(),
    env: childEnv({ ...NO_PROXY_ENV, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watch(child, t0);
}

export function enrollArgs(home: Home, url: string, tokenFile: string): string[] {
  return ['--config', home.configPath, 'enroll', '--url', url, '--token-file', tokenFile];
}

export function uploadArgs(home: Home, bundle: string): string[] {
  return ['--config', home.configPath, 'support-bundle', 'upload', bundle];
}

/** Writes an enrolment file by hand (for stand-in services and invalid-file cases). */
export async function writeEnrollmentFile(home: Home, doc: unknown): Promise<string> {
  await mkdir(home.stateDir, { recursive: true });
  const path = join(home.stateDir, 'enrollment.json');
  await writeFile(path, typeof doc === 'string' ? doc : JSON.stringify(doc), { mode: 0o600 });
  return path;
}

export function fakeEnrollment(baseUrl: string): Record<string, string> {
  return {
    base_url: baseUrl,
    api_key: `gak_${randomBytes(16).toString('hex')}`,
    tenant_id: 't_standin',
    agent_id: 'ag_standin',
    enrolled_at: new Date().toISOString(),
  };
}

/** Lines of random base64 (incompressible, no secrets): a log that makes a bundle of about `bytes`. */
export async function writeRandomLog(path: string, bytes: number): Promise<void> {
  const out = createWriteStream(path);
  for (let written = 0; written < bytes; ) {
    const line = `time=2026-11-21T08:00:00.000Z level=INFO msg=blob data=${randomBytes(768).toString('base64')}\n`;
    written += line.length;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

// ---------------------------------------------------------------------------------------
// Bundles made by hand (GNU tar + zstd), for the manifest-mismatch cases

/** Extracts a bundle into a fresh directory and returns it. */
export async function unpack(bundle: string, into: string): Promise<string> {
  const dir = await mkdtemp(join(into, 'unpacked-'));
  await execFileP('tar', ['--zstd', '-xf', bundle, '-C', dir]);
  return dir;
}

/** Packs the named files of `dir` (names as members, no ./ prefix) into a .tar.zst. */
export async function pack(dir: string, out: string, names?: string[]): Promise<void> {
  const members = names ?? (await readdir(dir)).sort();
  await execFileP('tar', ['--zstd', '-cf', out, '-C', dir, ...members]);
}

// ---------------------------------------------------------------------------------------
// Stand-in service (node:http or node:https)

export interface Recorded {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Raw header names as sent (to see Transfer-Encoding/Content-Length exactly). */
  rawHeaders: string[];
  bodyBytes: number;
  bodySha256: string;
  body: Buffer;
  at: number;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A scripted answer: a fixed reply, 'ok' (the default success), or 'stall' (PUT only: never read, never answer). */
export type Step = Reply | 'ok' | 'stall';
export type Route = 'enroll' | 'presign' | 'put' | 'register';

export interface StandInOptions {
  tls?: { key: string; cert: string };
  /** Per route, answers in order; the last one repeats. Default: always 'ok'. */
  script?: Partial<Record<Route, Step[]>>;
  /** expires_at of the presign answer (default: 15 minutes from now). */
  expiresAt?: () => string;
  /** Extra headers the presign answer asks the PUT to carry. */
  putHeaders?: Record<string, string>;
}

export interface StandIn {
  url: string;
  requests: Recorded[];
  of(route: Route): Recorded[];
  /** Resolves when a PUT's request head has arrived (for 'stall'). */
  putStarted: Promise<void>;
  close(): Promise<void>;
}

function routeOf(method: string, path: string): Route | undefined {
  if (method === 'POST' && path === '/v1/agents/enroll') return 'enroll';
  if (method === 'POST' && path === '/v1/support/bundle/upload-url') return 'presign';
  if (method === 'POST' && path === '/v1/support/bundle/register') return 'register';
  if (method === 'PUT' && path.startsWith('/objects/')) return 'put';
  return undefined;
}

export async function startStandIn(options: StandInOptions = {}): Promise<StandIn> {
  const requests: Recorded[] = [];
  const counts: Record<Route, number> = { enroll: 0, presign: 0, put: 0, register: 0 };
  let markPutStarted: () => void = () => {};
  const putStarted = new Promise<void>((r) => {
    markPutStarted = r;
  });
  let base = '';
  const sockets = new Set<net.Socket>();

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    const route = routeOf(req.method ?? '', path);
    const script = route ? options.script?.[route] : undefined;
    const n = route ? counts[route]++ : 0;
    const step: Step = script && script.length > 0 ? script[Math.min(n, script.length - 1)] : 'ok';
    if (route === 'put') markPutStarted();
    if (step === 'stall') {
      req.pause(); // read nothing: the agent's writes block once the socket buffers are full
      return;
    }
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (d: Buffer) => {
      hash.update(d);
      size += d.length;
      if (route !== 'put') chunks.push(d);
    });
    req.on('end', () => {
      const rec: Recorded = {
        method: req.method ?? '',
        path,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        bodyBytes: size,
        bodySha256: hash.digest('hex'),
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      requests.push(rec);
      const reply = step === 'ok' ? success(route, rec) : step;
      const text =
        reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      res.writeHead(reply.status, {
        'content-type': typeof reply.body === 'string' ? 'text/html' : 'application/json',
        'content-length': Buffer.byteLength(text),
        ...reply.headers,
      });
      res.end(text);
    });
  };

  const success = (route: Route | undefined, rec: Recorded): Reply => {
    switch (route) {
      case 'enroll':
        return {
          status: 201,
          body: { agent_id: 'ag_standin', tenant_id: 't_standin', api_key: 'gak_standin_key_0123' },
        };
      case 'presign': {
        const key = `bundles/t_standin/${randomBytes(8).toString('hex')}.tar.zst`;
        return {
          status: 200,
          body: {
            url: `${base}/objects/${key}?X-Sig=standin`,
            object_key: key,
            expires_at: options.expiresAt?.() ?? new Date(Date.now() + 15 * 60_000).toISOString(),
            headers: { 'content-type': 'application/octet-stream', ...options.putHeaders },
          },
        };
      }
      case 'put':
        return { status: 200, body: { ok: true } };
      case 'register': {
        const body = JSON.parse(rec.body.toString('utf8')) as { object_key: string };
        return {
          status: 201,
          body: {
            bundle_id: `bdl_standin${counts.register}`,
            object_key: body.object_key,
            uploaded_at: new Date().toISOString(),
          },
        };
      }
      default:
        return { status: 404, body: { error: { code: 'not_found', message: `no route ${rec.method} ${rec.path}` } } };
    }
  };

  const server = options.tls
    ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler)
    : http.createServer(handler);
  server.on(options.tls ? 'secureConnection' : 'connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  base = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  return {
    url: base,
    requests,
    of: (route) => requests.filter((r) => routeOf(r.method, r.path) === route),
    putStarted,
    async close() {
      for (const s of sockets) s.destroy();
      server.closeAllConnections?.();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

// ---------------------------------------------------------------------------------------
// Forward proxy: CONNECT tunnels (https:// targets) and absolute-form forwarding (http://
// targets), as node:http's built-in proxy support uses them.

export interface Proxy {
  url: string;
  /** `host:port` of every CONNECT. */
  tunnels: string[];
  /** `METHOD host:port` of every request forwarded in absolute form. */
  forwarded: string[];
  /** Bytes the client sent through the proxy (tunnels and forwarded request bodies). */
  bytesUp: () => number;
  close(): Promise<void>;
}

/** `drop`: accept each CONNECT's TCP connection, then close it without an answer (a proxy without CONNECT support). */
export async function startProxy(options: { drop?: boolean } = {}): Promise<Proxy> {
  const tunnels: string[] = [];
  const forwarded: string[] = [];
  let up = 0;
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute-form request target expected');
      return;
    }
    forwarded.push(`${req.method} ${target.host}`);
    req.on('data', (d: Buffer) => {
      up += d.length;
    });
    const upstream = http.request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = req.url ?? '';
    tunnels.push(target);
    if (options.drop) {
      client.destroy();
      return;
    }
    const m = /^(.*):(\d+)$/.exec(target);
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const upstream = net.connect(Number(m[2]), m[1].replace(/^\[(.*)\]$/, '$1'), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      client.on('data', (d: Buffer) => {
        up += d.length;
      });
      client.pipe(upstream);
      upstream.pipe(client);
    });
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    forwarded,
    bytesUp: () => up,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

// ---------------------------------------------------------------------------------------
// TLS

/** A throw-away self-signed certificate for localhost and 127.0.0.1 (openssl CLI). */
export async function selfSignedCert(dir: string): Promise<{ key: string; cert: string; certPath: string }> {
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  await execFileP('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyPath,
    '-out',
    certPath,
    '-days',
    '2',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
  ]);
  return { key: await readFile(keyPath, 'utf8'), cert: await readFile(certPath, 'utf8'), certPath };
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
