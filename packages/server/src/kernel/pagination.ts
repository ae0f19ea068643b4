// Keyset pagination for "newest first" lists. The cursor is `<RFC 3339 time>~<id>`: rows
// that share a timestamp are still ordered (by id), so a page boundary never skips one.
// `before` also takes a bare timestamp (any RFC 3339 offset), compared as an instant.

import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { Type } from 'typebox';
import { badRequest } from './errors.ts';

export const BeforeParam = Type.String({
  maxLength: 200,
  description: 'next page: the next_before of the previous page, or an RFC 3339 time (items strictly before it)',
});

export interface Before {
  /** Normalised to toISOString(), the form every stored timestamp has, so text order is time order. */
  at: string;
  id: string | undefined;
}

export function parseBefore(value: string | undefined): Before | undefined {
  if (value === undefined) return undefined;
  const sep = value.lastIndexOf('~');
  const time = sep >= 0 ? value.slice(0, sep) : value;
  const id = sep >= 0 ? value.slice(sep + 1) : undefined;
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(time) ? Date.parse(time) : Number.NaN;
  if (Number.isNaN(ms) || id === '')
    throw badRequest('before must be a next_before cursor or an RFC 3339 time', 'invalid_cursor');
  return { at: new Date(ms).toISOString(), id };
}

export function cursorOf(at: string, id: string): string {
  return `${at}~${id}`;
}

/** One page of a newest-first list: at most `limit` rows strictly before `before`. */
export interface PageRequest {
  limit: number;
  before: Before | undefined;
}

/** `next_before` of a page: the cursor of its last row, or null when the page was not full (the last one). */
export function nextBefore<T>(rows: T[], limit: number, keyOf: (row: T) => [at: string, id: string]): string | null {
  const last = rows.at(-1);
  return rows.length === limit && last ? cursorOf(...keyOf(last)) : null;
}

/**
 * `where` for rows strictly before the cursor in (time desc, id desc) order. Written as a
 * range on the time column (`t <= at`) and a residual test, so that both engines seek the
 * (…, time) index to the cursor: the equivalent `t < at or (t = at and id < x)` is an OR that
 * SQLite cannot use an index for, and every page scanned from the newest row (the last
 * page of 100,000 deliveries took 73 ms instead of under 1).
 */
export function beforeFilter(timeColumn: string, idColumn: string, before: Before): RawBuilder<SqlBool> {
  const t = sql.ref(timeColumn);
  if (before.id === undefined) return sql<SqlBool>`${t} < ${before.at}`;
  return sql<SqlBool>`(${t} <= ${before.at} and (${t} < ${before.at} or ${sql.ref(idColumn)} < ${before.id}))`;
}
