// Failed sign-ins counted in the database, so every replica sees them (issue 19): a row
// per failure and key (account and address, account, address), the key a SHA-256.

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function loginFailures(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('login_failures')
        .addColumn('key_hash', t.text, (c) => c.notNull())
        .addColumn('at', t.text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('login_failures_key').on('login_failures').columns(['key_hash', 'at']).execute();
      await db.schema.createIndex('login_failures_at').on('login_failures').column('at').execute();
    },
  };
}
