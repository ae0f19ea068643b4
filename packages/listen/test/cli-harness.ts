// What the tests of `guard` share: the receiver under development (a real HTTP server on
// loopback), the CLI as a child process whose lines are awaited as they come, and a TCP proxy
// the test can cut. No sleeps: each wait ends on an event (a request, a line, an exit).

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const NODE = join(ROOT, 'node_modules', '.bin', 'node');
export const BIN = join(ROOT, 'packages', 'listen', 'src', 'bin.ts');

// ---------------------------------------------------------------------------------------
// The receiver under development: records each request, answers `status`.

export interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export class LocalReceiver {
  readonly hits: Hit[] = [];
  status = 200;
  readonly #server: http.Server;
  #waiters: (() => void)[] = [];

  private constructor(server: http.Server) {
    this.#server = server;
  }

  static async start(): Promise<LocalReceiver> {
    const server = http.createServer();
    const receiver = new LocalReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiver.hits.push({
          path: req.url ?? '/',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(receiver.status, { 'content-type': 'application/json' }).end('{}');
        const w = receiver.#waiters;
        receiver.#waiters = [];
        for (const f of w) f();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  url(path = '/webhook'): string {
    return `http://127.0.0.1:${(this.#server.address() as net.AddressInfo).port}${path}`;
  }

  /** The signal ids received, in order. */
  ids(): string[] {
    return this.hits.map((h) => JSON.parse(h.body).data.signal_id);
  }

  async waitFor(signalId: string): Promise<Hit> {
    for (;;) {
      const hit = this.hits.find((h) => JSON.parse(h.body).data.signal_id === signalId);
      if (hit) return hit;
      await new Promise<void>((r) => this.#waiters.push(r));
    }
  }

  async close(): Promise<void> {
    const closed = new Promise((r) => this.#server.close(r));
    this.#server.closeAllConnections();
    await closed;
  }
}

// ---------------------------------------------------------------------------------------
// The CLI as a child process: its lines awaited as they come.

export class Cli {
  readonly child: ChildProcess;
  readonly out: string[] = [];
  readonly err: string[] = [];
  readonly exited: Promise<number | null>;
  #waiters: (() => void)[] = [];

  /** Runs `guard` with `args`: the repository's src/bin.ts on its Node, unless `command` names another. */
  constructor(args: string[], env: Record<string, string> = {}, command: string[] = [NODE, BIN]) {
    this.child = spawn(command[0], [...command.slice(1), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    const lines = (into: string[]) => {
      let rest = '';
      return (c: Buffer) => {
        rest += c.toString('utf8');
        const parts = rest.split('\n');
        rest = parts.pop() ?? '';
        into.push(...parts);
        this.#wake();
      };
    };
    this.child.stdout?.on('data', lines(this.out));
    this.child.stderr?.on('data', lines(this.err));
    this.exited = new Promise((r) =>
      this.child.on('close', (code) => {
        this.#wake();
        r(code);
      }),
    );
    this.exited.then(() => {
      this.#done = true;
    });
  }

  #done = false;

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  /** The first line of `stream` matching `re`; fails when the process exits first. */
  async line(stream: 'out' | 'err', re: RegExp): Promise<RegExpMatchArray> {
    for (;;) {
      for (const l of stream === 'out' ? this.out : this.err) {
        const m = re.exec(l);
        if (m) return m;
      }
      if (this.#done)
        throw new Error(
          `guard exited before printing ${re}:\nstdout:\n${this.out.join('\n')}\nstderr:\n${this.err.join('\n')}`,
        );
      await new Promise<void>((r) => this.#waiters.push(r));
    }
  }

  /** Runs to its end: the exit code and both outputs. */
  static async run(args: string[], env: Record<string, string> = {}, command?: string[]) {
    const cli = new Cli(args, env, command);
    const code = await cli.exited;
    return { code, out: cli.out.join('\n'), err: cli.err.join('\n') };
  }

  /** Ctrl-C; resolves with the exit code. */
  async interrupt(): Promise<number | null> {
    this.child.kill('SIGINT');
    return this.exited;
  }
}

// ---------------------------------------------------------------------------------------
// A TCP proxy between the CLI and the server, which the test cuts.

export class CuttableProxy {
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  #down = false;

  private constructor(server: net.Server) {
    this.#server = server;
  }

  static async start(target: string): Promise<CuttableProxy> {
    const { hostname, port } = new URL(target);
    const server = net.createServer();
    const proxy = new CuttableProxy(server);
    server.on('connection', (client) => {
      if (proxy.#down) {
        client.destroy();
        return;
      }
      const upstream = net.connect(Number(port), hostname);
      for (const s of [client, upstream]) {
        proxy.#sockets.add(s);
        s.on('close', () => proxy.#sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as net.AddressInfo).port}`;
  }

  /** Cuts every connection, and every new one until up(). */
  down(): void {
    this.#down = true;
    for (const s of this.#sockets) s.destroy();
  }

  up(): void {
    this.#down = false;
  }

  async close(): Promise<void> {
    this.down();
    await new Promise((r) => this.#server.close(r));
  }
}
