// Kysely over PostgreSQL (`pg`), for deployments of several replicas (DESIGN §8). One pool per
// process, sized by --database-pool-size. Counts and sizes come back as numbers on both
// engines: PostgreSQL's bigint (count(*), byte sizes) and numeric (sum) are parsed as
// JavaScript numbers, exact for every value this schema holds (< 2^53). Timestamps stay RFC
// 3339 text, as on SQLite, so every comparison and every answer is the same on both.
//
// A connection that is lost (the server restarts, fails over or stops) fails the queries on it
// with errors that `pg` gives no code; the client below marks them (errors.ts markUnreachable),
// so the API answers them 503 like a refused connection, and never lets such a loss end the
// process.

import pg from 'pg';
import { markUnreachable } from '../kernel/errors.ts';

const INT8 = 20;
const NUMERIC = 1700;

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * pg's Client, watching its own connection: once it emitted 'error' or 'end', every error of
 * its queries is marked as a lost connection. Its 'error' listener also keeps a connection lost
 * while checked out of the pool (the pool listens only to idle ones) from being an unhandled
 * 'error' event, which would end the process; the pool drops such a client when it is released.
 */
class WatchedClient extends pg.Client {
  private lost = false;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', (error) => {
      this.lost = true;
      markUnreachable(error);
    });
    this.on('end', () => {
      this.lost = true;
    });
  }

  // Every form of query(): with a callback (the pool's own query()), or returning a promise.
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads, passed through unchanged
  override query(...args: any[]): any {
    const mark = (error: unknown) => {
      if (this.lost) markUnreachable(error);
      return error;
    };
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (error: unknown, result: unknown) => callback(error ? mark(error) : error, result);
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    return result instanceof Promise ? result.catch((error) => Promise.reject(mark(error))) : result;
  }
}

export interface PostgresTarget {
  url: string;
  password: string | undefined;
  poolSize: number;
}

/**
 * The URL pg connects with, the password inside: pg merges a connection string over the other
 * options, and a string without a password replaces an explicit `password` with none.
 */
function connectionString(target: PostgresTarget): string {
  if (target.password === undefined) return target.url;
  const url = new URL(target.url);
  if (url.password === '') url.password = encodeURIComponent(target.password);
  return url.href;
}

/**
 * The planner settings of the hot paths' connections (delivery-queue-postgres.ts). Their
 * statements find every row by key or by index range, and their plans are made once per
 * connection (generic plans, below), at the first execution, often on a table still empty:
 * with those statistics the planner once hashed a whole partition to look up 20 ids once the
 * table had grown (36 ms instead of 0.4). With hash and merge joins and sequential scans
 * priced out, every plan is index lookups, whatever the statistics. Set per session, on
 * connections of their own, so that the outbox's statement runs alone in one round trip.
 */
const HOT_PATH_PLANNER = '-c enable_hashjoin=off -c enable_mergejoin=off -c enable_seqscan=off';

/** How the connections of one replica's `poolSize` are shared: the hot paths' pool, then the rest. */
export function poolSizes(poolSize: number): { hot: number; general: number } {
  const hot = Math.max(1, Math.min(4, Math.floor(poolSize / 2)));
  return { hot, general: Math.max(1, poolSize - hot) };
}

/**
 * A pool of `size` connections. `hot`: the delivery queue's, with the planner settings above;
 * the other (Kysely's, and everything else) keeps the planner's defaults.
 */
export function createPool(target: PostgresTarget, size = target.poolSize, hot = false): pg.Pool {
  const pool = new pg.Pool({
    Client: WatchedClient,
    connectionString: connectionString(target),
    max: size,
    application_name: hot ? 'guard-server queue' : 'guard-server',
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // The hot paths run named prepared statements (delivery-queue-postgres.ts) over the
    // partitioned delivery tables. PostgreSQL would keep planning them per execution (a plan
    // over every partition costs ~2.5 ms here, several times the execution); their plans do not
    // depend on the values, so plan once per connection. Kysely's unnamed statements are
    // planned per execution whatever this says.
    options: `-c plan_cache_mode=force_generic_plan${hot ? ` ${HOT_PATH_PLANNER}` : ''}`,
    // The hot paths' transactions send `begin` with their first statement and `commit` with
    // their last, without waiting for each answer (pg's pipeline mode; Kysely's connections
    // keep one statement on the wire at a time).
    pipeline: hot,
    types: types as pg.CustomTypesConfig,
  });
  // An idle connection the server closed (a restart, a failover) is dropped from the pool; the
  // next query opens another. Without a listener the error would end the process.
  pool.on('error', () => {});
  return pool;
}

/** A connection of its own, outside the pool (LISTEN holds one for the life of the process). */
export function createClient(target: PostgresTarget): pg.Client {
  return new WatchedClient({
    connectionString: connectionString(target),
    application_name: 'guard-server listen',
    connectionTimeoutMillis: 10_000,
    types: types as pg.CustomTypesConfig,
  });
}
