// The embedded database's WAL is checkpointed by the checkpointer thread, not by commits on
// the event loop: the server's connection has automatic checkpoints off, and yet the WAL stops
// growing once the thread has copied it back (each write then starts it over).

import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from './index.ts';

test('the server connection never checkpoints; the checkpointer thread keeps the WAL from growing', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'guard-checkpoint-'));
  const db = await openDatabase({ dataDir: dir });
  try {
    const auto = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db);
    assert.equal(auto.rows[0].wal_autocheckpoint, 0, 'commits would checkpoint on the event loop');
    // The WAL file keeps its high-water mark (the migrations' writes set the first one): what
    // counts is how far the writes below push it.
    const walAtStart = (await stat(join(dir, 'guard.db-wal'))).size;
    const filler = 'x'.repeat(1000);
    let written = 0;
    for (let round = 0; round < 8; round++) {
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 500; i++) {
          await trx
            .insertInto('tenants')
            .values({ id: `t${round}_${i}`, name: filler, created_at: filler })
            .execute();
          written += 2000;
        }
      });
      await new Promise((r) => setTimeout(r, 300)); // the thread checkpoints every 100 ms
    }
    const wal = (await stat(join(dir, 'guard.db-wal'))).size - walAtStart;
    assert.ok(written > 7_000_000, `wrote ${written} bytes`);
    assert.ok(wal < written / 3, `the WAL grew by ${wal} bytes of ${written} written: nothing checkpointed it`);
  } finally {
    await db.destroy();
    await rm(dir, { recursive: true, force: true });
  }
});
