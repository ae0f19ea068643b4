// The column types every migration builds with, per engine (the rules in ../migrations.ts):
// text sorts by byte on both, and `bigint` is 64-bit on both.

import { type RawBuilder, sql } from 'kysely';
import type { Engine } from '../engine.ts';

export interface ColumnTypes {
  text: 'text' | RawBuilder<unknown>;
  bigint: 'integer' | 'bigint';
}

export function columnTypes(engine: Engine): ColumnTypes {
  return engine === 'postgres'
    ? { text: sql`text collate "C"`, bigint: 'bigint' }
    : { text: 'text', bigint: 'integer' };
}
