// pg merges a connection string over the other options: a URL without a password used to drop
// the password given beside it (--database-password-file, PGPASSWORD read by settings.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'pg-connection-string';
import { createClient, createPool } from './postgres.ts';

test('a password given beside a URL without one is the password pg connects with, special characters intact', async () => {
  const password = 'p@ss:w/rd %20 ü';
  const pool = createPool({ url: 'postgres://guard@db.internal:5432/guard', password, poolSize: 2 });
  const client = createClient({ url: 'postgres://guard@db.internal:5432/guard', password, poolSize: 2 });
  assert.equal(parse(pool.options.connectionString as string).password, password);
  assert.equal(client.password, password);
  await pool.end();
});

test("the URL's own password wins over one given beside it", async () => {
  const pool = createPool({ url: 'postgres://guard:from-url@db:5432/guard', password: 'beside', poolSize: 2 });
  assert.equal(parse(pool.options.connectionString as string).password, 'from-url');
  await pool.end();
});
