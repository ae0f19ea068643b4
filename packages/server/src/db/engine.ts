// Which engine a Kysely instance (or a transaction of one) runs on. Repositories share their
// SQL through Kysely; where an engine needs its own (a row lock, a hot path), they ask here.

import { type Kysely, PostgresAdapter } from 'kysely';

export type Engine = 'sqlite' | 'postgres';

export function engineOf(db: Kysely<never> | Kysely<unknown> | { getExecutor(): { adapter: unknown } }): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}
