// Monthly partitions of webhook_deliveries and webhook_attempts on PostgreSQL (migration 0002
// makes both tables partitioned by range of their time-ordered ids, with a default partition
// for anything outside the months made here). Each month M has `webhook_deliveries_pYYYY_MM`
// and `webhook_attempts_pYYYY_MM`, for ids from uuidv7Floor(start of M) to that of M + 1.
//
// - ensurePartitions makes the current month and the next two ahead of time (at start and on
//   every maintenance run), so rows never land in the default partition, which would stop a
//   month's partition from being made over them.
// - dropExpiredPartitions drops a month once all of it lies before the retention cutoff:
//   attempts at once (each started in that month), deliveries when none of the month's is
//   still pending, in flight, or completed after the cutoff (a redelivery); such a month stays
//   and is trimmed by retention's batches instead.
// DDL waits at most LOCK_TIMEOUT for the table lock (a long report query would otherwise
// queue every claim behind it); a month not dropped now is dropped by a later run.

import { sql } from 'kysely';
import type { Db } from '../db/index.ts';
import { uuidv7Floor } from './time-ordered-bounds.ts';

const TABLES = ['webhook_deliveries', 'webhook_attempts'] as const;
const MONTHS_AHEAD = 2;
const LOCK_TIMEOUT = '2s';

interface Month {
  /** e.g. p2026_11 */
  suffix: string;
  startMs: number;
  endMs: number;
}

function monthOf(year: number, monthIndex: number): Month {
  const start = Date.UTC(year, monthIndex, 1);
  const end = Date.UTC(year, monthIndex + 1, 1);
  const d = new Date(start);
  const suffix = `p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
  return { suffix, startMs: start, endMs: end };
}

/** Makes this month's partitions and the next MONTHS_AHEAD months'; returns the names made. */
export async function ensurePartitions(db: Db, now: Date): Promise<string[]> {
  const made: string[] = [];
  for (let i = 0; i <= MONTHS_AHEAD; i++) {
    const m = monthOf(now.getUTCFullYear(), now.getUTCMonth() + i);
    for (const table of TABLES) {
      const name = `${table}_${m.suffix}`;
      const exists = await sql<{ found: boolean }>`select to_regclass(${name}) is not null as found`.execute(db);
      if (exists.rows[0]?.found) continue;
      await db.transaction().execute(async (trx) => {
        await sql`select set_config('lock_timeout', ${LOCK_TIMEOUT}, true)`.execute(trx);
        await sql`create table if not exists ${sql.id(name)} partition of ${sql.id(table)}
          for values from (${sql.lit(uuidv7Floor(m.startMs))}) to (${sql.lit(uuidv7Floor(m.endMs))})`.execute(trx);
      });
      made.push(name);
    }
  }
  return made;
}

/** The month partitions of `table`, oldest first. */
async function monthPartitions(db: Db, table: string): Promise<{ name: string; month: Month }[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${table}::regclass`.execute(db);
  const found: { name: string; month: Month }[] = [];
  for (const { name } of rows) {
    const m = /_p(\d{4})_(\d{2})$/.exec(name);
    if (m) found.push({ name, month: monthOf(Number(m[1]), Number(m[2]) - 1) });
  }
  return found.sort((a, b) => a.month.startMs - b.month.startMs);
}

/** Drops the months that lie wholly before `cutoff`; returns the partitions dropped. */
export async function dropExpiredPartitions(db: Db, cutoff: Date): Promise<string[]> {
  const dropped: string[] = [];
  const drop = async (name: string) => {
    try {
      await db.transaction().execute(async (trx) => {
        await sql`select set_config('lock_timeout', ${LOCK_TIMEOUT}, true)`.execute(trx);
        await sql`drop table if exists ${sql.id(name)}`.execute(trx);
      });
      dropped.push(name);
    } catch (error) {
      if ((error as { code?: string }).code !== '55P03') throw error; // lock_not_available: next run
    }
  };
  for (const { name, month } of await monthPartitions(db, 'webhook_attempts'))
    if (month.endMs <= cutoff.getTime()) await drop(name);
  for (const { name, month } of await monthPartitions(db, 'webhook_deliveries')) {
    if (month.endMs > cutoff.getTime()) continue;
    const busy = await sql<{ found: boolean }>`
      select exists (select 1 from ${sql.id(name)}
        where state in ('pending', 'delivering') or completed_at >= ${cutoff.toISOString()}) as found`.execute(db);
    if (!busy.rows[0]?.found) await drop(name);
  }
  return dropped;
}
