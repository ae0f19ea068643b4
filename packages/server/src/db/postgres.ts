// Kysely over PostgreSQL (`pg`), for deployments of several replicas (DESIGN §8). One pool per
// process, sized by --database-pool-size. Counts and sizes come back as numbers on both
// engines: PostgreSQL's bigint (count(*), byte sizes) and numeric (sum) are parsed as
// JavaScript numbers, exact for every value this schema holds (< 2^53). Timestamps stay RFC
// 3339 text, as on SQLite, so every comparison and every answer is the same on both.

import pg from 'pg';

const INT8 = 20;
const NUMERIC = 1700;

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export interface PostgresTarget {
  url: string;
  password: string | undefined;
  poolSize: number;
}

export function createPool(target: PostgresTarget): pg.Pool {
  const pool = new pg.Pool({
    connectionString: target.url,
    password: target.password,
    max: target.poolSize,
    application_name: 'guard-server',
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    types: types as pg.CustomTypesConfig,
  });
  // An idle connection the server closed (a restart, a failover) is dropped from the pool; the
  // next query opens another. Without a listener the error would end the process.
  pool.on('error', () => {});
  return pool;
}

/** A connection of its own, outside the pool (LISTEN holds one for the life of the process). */
export function createClient(target: PostgresTarget): pg.Client {
  return new pg.Client({
    connectionString: target.url,
    password: target.password,
    application_name: 'guard-server listen',
    connectionTimeoutMillis: 10_000,
    types: types as pg.CustomTypesConfig,
  });
}
