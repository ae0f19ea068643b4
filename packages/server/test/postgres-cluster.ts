// A throw-away PostgreSQL cluster for tests and benchmarks: initdb in a temp dir, postgres on
// a free loopback port with its socket in that dir, never a system service; stopped with
// `pg_ctl stop -m immediate` and removed. Run as root (CI), the cluster runs as the `postgres`
// user that Debian's package creates (initdb refuses root), through setpriv.
//
// Settings: fsync off for the test suite (nothing here outlives the run); the benchmark asks
// for the durable defaults (`durable: true`).

import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './loopback.ts';

const execFileP = promisify(execFile);

export const PG_USER = 'guard';

/** What tests need of a cluster: fresh databases in it. */
export interface PgDatabases {
  /** postgres://guard@127.0.0.1:PORT/<database> */
  url(database?: string): string;
  /** Creates an empty database with a fresh name; returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** Drops a database made by createDatabase (its connections are ended). */
  dropDatabase(url: string): Promise<void>;
}

/** A cluster someone else started (scripts/test-postgres.ts), by the URL of its `postgres` database. */
export function clusterAt(adminUrl: string): PgDatabases {
  const base = new URL(adminUrl);
  const url = (database = 'postgres') => {
    const u = new URL(base.href);
    u.pathname = `/${database}`;
    return u.href;
  };
  return databasesOf(url);
}

function databasesOf(url: (database?: string) => string): PgDatabases {
  let seq = 0;
  const admin = async <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  return {
    url,
    async createDatabase(prefix = 'guard') {
      const name = `${prefix}_${process.pid}_${++seq}_${Math.random().toString(36).slice(2, 8)}`;
      await admin((c) => c.query(`create database ${name} template template0`));
      return url(name);
    },
    async dropDatabase(dbUrl: string) {
      const name = new URL(dbUrl).pathname.slice(1);
      if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`not a test database: ${name}`);
      await admin((c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

export interface PgCluster extends PgDatabases {
  port: number;
  dir: string;
  /** The pids of the cluster's processes (postmaster and backends), for CPU accounting. */
  pids(): number[];
  /** `pg_ctl restart -m fast`: every connection is cut, the data and the port stay (fault tests). */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`, keeping the data dir: the database is unreachable until startPostgres(). */
  stopPostgres(): Promise<void>;
  /** Starts the stopped postgres again on the same port. */
  startPostgres(): Promise<void>;
  stop(): Promise<void>;
}

/** The newest installed PostgreSQL's bin dir (Debian: /usr/lib/postgresql/<major>/bin). */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const majors = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (majors.length > 0) return join(root, majors[0], 'bin');
  }
  try {
    const bin = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    if (existsSync(join(bin, 'initdb'))) return bin;
  } catch {
    // not installed
  }
  return undefined;
}

function osUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

export async function startPgCluster(
  options: { durable?: boolean; label?: string; settings?: Record<string, string> } = {},
): Promise<PgCluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed (scripts/install-test-deps.sh installs it from Debian)');
  const dir = await mkdtemp(join(os.tmpdir(), `guard-pg-${options.label ?? 'test'}-`));
  const data = join(dir, 'data');
  // initdb and postgres refuse to run as root: as root, run them as Debian's postgres user.
  const asUser: string[] = [];
  if (process.getuid?.() === 0) {
    const user = osUser('postgres');
    if (!user) throw new Error('running as root needs the postgres user (Debian creates it with postgresql)');
    await chown(dir, user.uid, user.gid);
    asUser.push('setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--');
  }
  const run = (cmd: string, args: string[]) => {
    const argv = [...asUser, join(bin, cmd), ...args];
    return execFileP(argv[0], argv.slice(1), { cwd: dir, env: { ...process.env, LC_ALL: 'C' } });
  };
  try {
    await run('initdb', [
      '-D',
      data,
      '-U',
      PG_USER,
      '--auth=trust',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
      '--no-instructions',
    ]);
    const port = await freePort();
    const settings: Record<string, string> = {
      listen_addresses: '127.0.0.1',
      port: String(port),
      unix_socket_directories: dir,
      max_connections: '400',
      shared_buffers: '128MB',
      ...(options.durable ? {} : { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' }),
      ...options.settings,
    };
    const opts = Object.entries(settings)
      .map(([k, v]) => `-c ${k}=${v}`)
      .join(' ');
    const pgCtl = async (...args: string[]) => {
      await run('pg_ctl', ['-D', data, '-w', '-t', '60', ...args]);
    };
    const log = join(dir, 'postgres.log');
    await pgCtl('-l', log, '-o', opts, 'start');
    const url = (database = 'postgres') => `postgres://${PG_USER}@127.0.0.1:${port}/${database}`;
    let stopped = false;
    return {
      ...databasesOf(url),
      port,
      dir,
      pids() {
        try {
          const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
          const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' })
            .split('\n')
            .map((l) => Number(l.trim()))
            .filter((n) => n > 0);
          return [postmaster, ...children];
        } catch {
          return [];
        }
      },
      restart: () => pgCtl('-l', log, '-o', opts, '-m', 'fast', 'restart'),
      stopPostgres: () => pgCtl('-m', 'fast', 'stop'),
      startPostgres: () => pgCtl('-l', log, '-o', opts, 'start'),
      async stop() {
        if (stopped) return;
        stopped = true;
        await run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Synchronous stop for process exit handlers (an `exit` listener cannot wait): immediate
 * shutdown, then the directory goes.
 */
export function stopPgClusterSync(dir: string): void {
  const bin = postgresBinDir();
  if (!bin) return;
  const data = join(dir, 'data');
  const prefix =
    process.getuid?.() === 0 ? ['setpriv', '--reuid=postgres', '--regid=postgres', '--clear-groups', '--'] : [];
  const argv = [...prefix, join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop'];
  try {
    execFileSync(argv[0], argv.slice(1), { stdio: 'ignore', cwd: dir });
  } catch {
    // already stopped
  }
  try {
    execFileSync('rm', ['-rf', dir]);
  } catch {
    // best effort
  }
}
