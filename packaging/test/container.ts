// Throw-away Debian 12 containers for the package round trips (issue 19: tests never touch the
// machine). A `.deb` is installed, upgraded and purged inside one, never on the host that runs
// the tests: an operator's installed guard-agent or /etc/guard is none of a test's business.
//
// The root file system is made once from Debian's own packages (no registry is reachable
// here, DESIGN §9): `debootstrap --variant=minbase bookworm` with what the tests run inside
// (systemd for systemd-analyze, init-system-helpers for the maintainer scripts, logrotate,
// man-db, adduser, zstd), imported with `podman import`. It is cached under
// node_modules/.cache/guard-test-rootfs, keyed by those inputs (ROOTFS), and rebuilt only when
// they change (a few minutes); each test then starts a container from it in about a second.
//
// Podman keeps its images and containers in that cache directory too (--root; --runroot and
// --tmpdir under the temp directory), with a containers.conf of its own (CONTAINERS_CONF):
// runc with cgroupfs, no default ulimits (this VM refuses crun and podman's default nofile),
// events to a file (no journald here). Containers share the host's network, so a guard-server
// the test process runs on 127.0.0.1 is reachable from inside.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { buildOnce } from '../build/cache.ts';
import { ROOT } from '../build/paths.ts';

/** What the root file system is made from: its hash names the image. */
const ROOTFS = {
  suite: 'bookworm',
  variant: 'minbase',
  mirror: 'http://deb.debian.org/debian',
  include: ['systemd', 'init-system-helpers', 'logrotate', 'man-db', 'adduser', 'zstd'],
  // Bump when the way the tree is made changes.
  recipe: 1,
};
const ROOTFS_HASH = createHash('sha256').update(JSON.stringify(ROOTFS)).digest('hex').slice(0, 16);
export const TEST_IMAGE = `localhost/guard-test-rootfs:${ROOTFS_HASH}`;

// Resolved: podman records its store's path and refuses the same store under another name (a
// git worktree whose cache links to the main checkout's).
const CACHE_LINK = join(ROOT, 'node_modules', '.cache', 'guard-test-rootfs');
const CACHE = existsSync(CACHE_LINK) ? realpathSync(CACHE_LINK) : CACHE_LINK;
const STORE = join(CACHE, 'podman');
const RUN = join(os.tmpdir(), `guard-test-podman-${process.getuid?.() ?? 0}`);
const CONF = join(CACHE, 'containers.conf');
const CONF_TEXT = `# Written by packaging/test/container.ts for the tests' own podman store.
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"

[network]
network_config_dir = "${join(CACHE, 'networks')}"
`;
/** Label of every test container: the pid of the test process that started it. */
export const OWNER_LABEL = 'guard-test.owner-pid';

export interface Cmd {
  code: number | null;
  /** stdout and stderr together. */
  out: string;
  stdout: string;
}

function podmanArgs(args: string[]): string[] {
  return ['--root', STORE, '--runroot', join(RUN, 'runroot'), '--tmpdir', join(RUN, 'tmp'), ...args];
}

function podmanEnv(): NodeJS.ProcessEnv {
  return { ...process.env, CONTAINERS_CONF: CONF };
}

/** Runs podman with the tests' store and configuration; never throws. */
export function podman(args: string[], timeoutMs = 300_000): Cmd {
  const r = spawnSync('podman', podmanArgs(args), {
    encoding: 'utf8',
    env: podmanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
    maxBuffer: 64 << 20,
  });
  return {
    code: r.status,
    out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`,
    stdout: r.stdout ?? '',
  };
}

/** podman, failing the test with its output unless it exits 0; returns the output. */
export function mustPodman(args: string[], timeoutMs?: number): string {
  const r = podman(args, timeoutMs);
  assert.equal(r.code, 0, `podman ${args.join(' ')} failed:\n${r.out}`);
  return r.out;
}

/** Fails (never skips) when containers cannot be made here, saying what is missing. */
export function requireContainers(): void {
  assert.equal(process.getuid?.(), 0, 'the package tests run podman as root (host network, dpkg inside)');
  for (const tool of ['podman', 'runc', 'debootstrap']) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    assert.ok(found || existsSync(`/usr/sbin/${tool}`), `${tool} is missing: run scripts/install-test-deps.sh`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes test containers whose test process is gone (an interrupted run). */
function removeOrphans(): void {
  const r = podman(['ps', '-a', '--filter', `label=${OWNER_LABEL}`, '--format', `{{.ID}} {{.Labels}}`]);
  if (r.code !== 0) return;
  for (const line of r.out.split('\n').filter(Boolean)) {
    const id = line.split(' ')[0];
    const pid = Number(new RegExp(`${OWNER_LABEL.replaceAll('.', '\\.')}:(\\d+)`).exec(line)?.[1] ?? 0);
    if (pid > 0 && !alive(pid)) podman(['rm', '-f', '-t', '0', id]);
  }
}

function run(cmd: string, args: string[], log: string): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30 * 60_000 });
  writeFileSync(log, `${r.stdout ?? ''}${r.stderr ?? ''}`, { flag: 'a' });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed (${r.error ?? `exit ${r.status}`}); see ${log}`);
}

async function buildImage(): Promise<void> {
  const work = await mkdtemp(join(CACHE, 'build-'));
  const log = join(CACHE, 'build.log');
  await writeFile(log, `${new Date().toISOString()} building ${TEST_IMAGE} from ${JSON.stringify(ROOTFS)}\n`);
  try {
    const tree = join(work, 'root');
    run(
      'debootstrap',
      [`--variant=${ROOTFS.variant}`, `--include=${ROOTFS.include.join(',')}`, ROOTFS.suite, tree, ROOTFS.mirror],
      log,
    );
    // Nothing the tests need: the downloaded packages and the package lists.
    run('sh', ['-c', 'rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*', 'sh', tree], log);
    const tar = join(work, 'root.tar');
    run('tar', ['-C', tree, '--numeric-owner', '-cf', tar, '.'], log);
    podman(['rmi', '-f', TEST_IMAGE]);
    mustPodman(['import', '--change', 'CMD ["/bin/sh"]', tar, TEST_IMAGE], 600_000);
  } finally {
    // debootstrap mounts /proc (and more) inside the tree while it works: never delete through
    // a mount it left behind (killed half-way), unmount first and keep the tree if that fails.
    const mounted = () =>
      readFileSync('/proc/mounts', 'utf8')
        .split('\n')
        .map((l) => l.split(' ')[1])
        .filter((m) => m?.startsWith(`${work}/`));
    for (const m of mounted().reverse()) spawnSync('umount', ['-l', m]);
    if (mounted().length === 0) await rm(work, { recursive: true, force: true });
  }
}

/**
 * The tests' podman store and configuration, ready; returns a podman wrapper with them (for
 * podman-compose's --podman-path).
 */
export function preparePodman(): string {
  requireContainers();
  for (const d of [CACHE, RUN, join(CACHE, 'networks')]) mkdirSync(d, { recursive: true });
  writeFileSync(CONF, CONF_TEXT);
  const wrapper = join(CACHE, 'podman-tests.sh');
  writeFileSync(
    wrapper,
    `#!/bin/sh\nCONTAINERS_CONF=${quote(CONF)} exec podman ${podmanArgs([]).map(quote).join(' ')} "$@"\n`,
    { mode: 0o755 },
  );
  return wrapper;
}

/** The test image, built from Debian's packages unless the cache holds it already. */
export async function ensureTestImage(): Promise<string> {
  preparePodman();
  const marker = join(CACHE, `${ROOTFS_HASH}.imported`);
  const exists = () => podman(['image', 'exists', TEST_IMAGE]).code === 0;
  if (existsSync(marker) && !exists()) await rm(marker, { force: true }); // the store was wiped
  await buildOnce('test-rootfs', ROOTFS_HASH, [marker], async () => {
    if (!exists()) await buildImage();
    await writeFile(marker, `${TEST_IMAGE}\n`);
  });
  removeOrphans();
  return TEST_IMAGE;
}

/** Shell-quotes one word for `sh -c`. */
export const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** A running container (`sleep infinity` as its process); exec runs commands in it. */
export class Container {
  readonly name: string;
  private constructor(name: string) {
    this.name = name;
  }

  /**
   * Starts a container from the test image, host network, with each of `mounts` (host path →
   * container path) bound read-only.
   */
  static async start(tag: string, mounts: Record<string, string> = {}): Promise<Container> {
    const image = await ensureTestImage();
    const name = `guard-test-${tag}-${process.pid}-${Date.now().toString(36)}`;
    mustPodman([
      'run',
      '-d',
      '--name',
      name,
      '--label',
      `${OWNER_LABEL}=${process.pid}`,
      '--network',
      'host',
      '--no-healthcheck',
      ...Object.entries(mounts).flatMap(([from, to]) => ['-v', `${from}:${to}:ro`]),
      image,
      'sleep',
      'infinity',
    ]);
    return new Container(name);
  }

  /** Runs `args` inside (as root, cwd /); never throws. */
  exec(args: string[], env: Record<string, string> = {}): Cmd {
    const envArgs = Object.entries({ DEBIAN_FRONTEND: 'noninteractive', ...env }).flatMap(([k, v]) => [
      '--env',
      `${k}=${v}`,
    ]);
    return podman(['exec', ...envArgs, this.name, ...args]);
  }

  /** Runs `args` inside; fails the test with the output unless it exits 0. Returns the output. */
  must(args: string[], env: Record<string, string> = {}): string {
    const r = this.exec(args, env);
    assert.equal(r.code, 0, `[${this.name}] ${args.join(' ')} failed:\n${r.out}`);
    return r.out;
  }

  /**
   * Runs `args` inside without blocking this process (exec blocks it): for a program that
   * talks to a server the test runs in this process. Fails unless it exits 0; returns stdout.
   */
  async mustAsync(args: string[]): Promise<string> {
    const { output, exited, stdout } = this.spawn(args);
    const code = await exited;
    assert.equal(code, 0, `[${this.name}] ${args.join(' ')} failed:\n${output()}`);
    return stdout();
  }

  /** A shell script inside; fails unless it exits 0. */
  sh(script: string): string {
    return this.must(['sh', '-c', script]);
  }

  exists(path: string): boolean {
    return this.exec(['test', '-e', path]).code === 0;
  }

  readFile(path: string): string {
    const r = this.exec(['cat', path]);
    assert.equal(r.code, 0, `[${this.name}] cat ${path}: ${r.out}`);
    return r.stdout;
  }

  /** `stat` of a path inside: mode (permission bits), owner and group names. */
  stat(path: string): { mode: number; user: string; group: string } {
    const [mode, user, group] = this.must(['stat', '-c', '%a %U %G', path]).trim().split(' ');
    return { mode: Number.parseInt(mode, 8), user, group };
  }

  /** Starts `args` inside without waiting (a long-running program); its output is collected. */
  spawn(args: string[]): {
    child: ChildProcess;
    /** stdout and stderr together, so far. */
    output: () => string;
    stdout: () => string;
    exited: Promise<number | null>;
  } {
    const child = spawn('podman', podmanArgs(['exec', this.name, ...args]), {
      env: podmanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stdout = '';
    child.stdout?.on('data', (d) => {
      out += d;
      stdout += d;
    });
    child.stderr?.on('data', (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((ok) => child.on('close', ok));
    return { child, output: () => out, stdout: () => stdout, exited };
  }

  remove(): void {
    podman(['rm', '-f', '-t', '0', this.name]);
  }
}

/**
 * netavark does not always remove a published port's forwarding when compose removes the
 * container: this machine kept rules of earlier runs' projects that still sent
 * 127.0.0.1:<port> to a container long gone. A later listener on that port number (another
 * test's server or receiver, which the kernel may give it) then had its connections sent to
 * the dead address: EHOSTUNREACH after 3 s, or a connect timeout, in two CI runs. So the
 * project's own rules, which netavark names after its network in a comment, are deleted.
 */
export function dropLeftoverPortForwards(project: string): number {
  const chain = 'NETAVARK-HOSTPORT-DNAT';
  const listed = spawnSync('iptables', ['-t', 'nat', '-S', chain], { encoding: 'utf8' });
  if (listed.status !== 0) return 0;
  let dropped = 0;
  for (const line of listed.stdout.split('\n')) {
    if (!line.startsWith(`-A ${chain} `) || !line.includes(`"dnat name: ${project}_`)) continue;
    // `-S` prints the rule as iptables arguments (the comment in double quotes): -D takes them back.
    const words = (line.slice(3).match(/"[^"]*"|\S+/g) ?? []).map((w) => w.replace(/^"(.*)"$/, '$1'));
    if (spawnSync('iptables', ['-t', 'nat', '-D', ...words]).status === 0) dropped++;
  }
  return dropped;
}
