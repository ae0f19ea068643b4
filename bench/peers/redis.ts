// Debian's redis-server for bench/peers.ts, never installed on the machine: the .debs of
// redis-server and redis-tools (Debian's redis-server is a link to redis-check-rdb, which
// redis-tools ships) and of the two libraries they link that a Node machine rarely has
// (liblzf1, libjemalloc2) are fetched with `apt-get download` — apt with lists of its own
// under node_modules/.cache, as packaging/build/image.ts fetches the image's packages — and
// unpacked with `dpkg-deb -x`. The binary runs on a loopback port with a temp dir,
// LD_LIBRARY_PATH pointing at the unpacked libraries; its configuration is Redis's own
// defaults (as Debian's redis.conf: RDB snapshots, no append-only file).

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { freePort, ROOT, sleep } from '../lib-tls.ts';

const CACHE = join(ROOT, 'node_modules', '.cache', 'guard-bench-redis');
const PACKAGES = ['redis-server', 'redis-tools', 'liblzf1', 'libjemalloc2'];
const SOURCES = [
  'http://deb.debian.org/debian bookworm main',
  'http://deb.debian.org/debian bookworm-updates main',
  'http://deb.debian.org/debian-security bookworm-security main',
];
const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';

export interface RedisBinary {
  bin: string;
  libDir: string;
  /** e.g. "7.0.15-1~deb12u10" */
  version: string;
}

function aptOptions(): string[] {
  return [
    `Dir::State::Lists=${join(CACHE, 'apt', 'lists')}`,
    `Dir::Cache=${join(CACHE, 'apt', 'cache')}`,
    `Dir::Etc::SourceList=${join(CACHE, 'apt', 'sources.list')}`,
    'Dir::Etc::SourceParts=/dev/null',
    'Dir::State::status=/dev/null',
    'APT::Sandbox::User=root',
    'Debug::NoLocking=1',
  ].flatMap((o) => ['-o', o]);
}

/** The unpacked redis-server (fetched once; later runs use the cache). Throws why it cannot. */
export async function redisBinary(): Promise<RedisBinary> {
  const root = join(CACHE, 'root');
  const bin = join(root, 'usr', 'bin', 'redis-server');
  const libDir = join(root, 'usr', 'lib', 'x86_64-linux-gnu');
  const debs = join(CACHE, 'debs');
  if (!existsSync(bin)) {
    if (process.arch !== 'x64') throw new Error(`Debian's amd64 packages are fetched; this machine is ${process.arch}`);
    await rm(CACHE, { recursive: true, force: true });
    for (const d of ['apt/lists/partial', 'apt/cache/archives/partial', 'debs', 'root'])
      await mkdir(join(CACHE, d), { recursive: true });
    await writeFile(
      join(CACHE, 'apt', 'sources.list'),
      SOURCES.map((s) => `deb [signed-by=${KEYRING}] ${s}\n`).join(''),
    );
    const apt = (args: string[]) => {
      try {
        execFileSync('apt-get', [...aptOptions(), '-qq', ...args], { cwd: debs, stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (error) {
        const e = error as { stderr?: Buffer; message: string };
        throw new Error(`apt-get ${args[0]} failed: ${e.stderr?.toString().trim() || e.message}`);
      }
    };
    apt(['update']);
    apt(['download', ...PACKAGES]);
    for (const name of await readdir(debs)) execFileSync('dpkg-deb', ['-x', join(debs, name), root]);
  }
  const env = { ...process.env, LD_LIBRARY_PATH: libDir };
  const missing = execFileSync('ldd', [bin], { encoding: 'utf8', env })
    .split('\n')
    .filter((l) => l.includes('not found'));
  if (missing.length > 0) throw new Error(`redis-server misses shared libraries: ${missing.join('; ').trim()}`);
  const deb = (await readdir(debs)).find((n) => n.startsWith('redis-server_'));
  const version = deb ? execFileSync('dpkg-deb', ['-f', join(debs, deb), 'Version'], { encoding: 'utf8' }).trim() : '?';
  return { bin, libDir, version: version.replace(/^\d+:/, '') };
}

export interface RedisProcess {
  port: number;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** redis-server on 127.0.0.1:<free port>, its working dir `dir`, otherwise Redis's defaults. */
export async function startRedis(binary: RedisBinary, dir: string): Promise<RedisProcess> {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const child = spawn(binary.bin, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--daemonize', 'no'], {
    env: { ...process.env, LD_LIBRARY_PATH: binary.libDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out = (out + c.toString('utf8')).slice(-20_000);
  });
  child.stderr?.on('data', (c: Buffer) => {
    out = (out + c.toString('utf8')).slice(-20_000);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited at start:\n${out}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.end('PING\r\n');
        s.once('data', (d) => resolve(d.toString().startsWith('+PONG')));
      });
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not answer within 10 s:\n${out}`);
    }
    await sleep(50);
  }
  return {
    port,
    pid: child.pid as number,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}
