// Issue 24, item 2: analyzer rules as code (DESIGN §4, "Analyzers as code"). The rules support
// staff set are vendor-wide — no tenant — and replaced as a whole by each PUT: a row per rule,
// in the order given (position), with who set the list and when.

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function analyzerRules(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('analyzer_rules')
        .addColumn('id', t.text, (c) => c.primaryKey())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('title', t.text, (c) => c.notNull())
        .addColumn('severity', t.text, (c) => c.notNull())
        .addColumn('member', t.text, (c) => c.notNull())
        .addColumn('pattern', t.text, (c) => c.notNull())
        .addColumn('min_count', 'integer')
        .addColumn('updated_at', t.text, (c) => c.notNull())
        .addColumn('updated_by', t.text, (c) => c.notNull())
        .execute();
    },
  };
}
