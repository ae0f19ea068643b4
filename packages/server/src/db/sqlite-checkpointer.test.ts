// The embedded database's WAL is checkpointed by the checkpointer thread, not by commits on
// the event loop: the server's connection has automatic checkpoints off, and yet the WAL stops
// growing once the thread has copied it back (each write then starts it over).

import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from './index.ts';
import { startCheckpointer } from './sqlite-checkpointer.ts';
import { openSqlite } from './sqlite-dialect.ts';

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

test('commits never cut the WAL file back; the thread does, once the database has been quiet', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'guard-checkpoint-'));
  const path = join(dir, 'guard.db');
  const db = openSqlite(path, { checkpoints: false });
  const checkpointer = startCheckpointer(path, { quietMs: 500, sizeLimit: 256 * 1024 });
  const walSize = async () => (await stat(`${path}-wal`)).size;
  try {
    const limit = db.prepare('pragma journal_size_limit').get() as { journal_size_limit: number };
    assert.equal(limit.journal_size_limit, -1, 'a commit after a reset would truncate the WAL');
    db.exec('create table t (id integer primary key, v text)');
    const insert = db.prepare('insert into t (v) values (?)');
    // A burst: commits faster than the thread resets the WAL, which grows past the limit.
    db.exec('begin');
    for (let i = 0; i < 2000; i++) insert.run('x'.repeat(1000));
    db.exec('commit');
    const afterBurst = await walSize();
    assert.ok(afterBurst > 1024 * 1024, `the WAL is ${afterBurst} bytes after a 2 MB burst`);
    // The next commits never truncate it: checkpointed and reset by then, they start it over
    // (the same size); on a loaded machine the thread may not have got that far in 250 ms, and
    // they append (a few frames more). Smaller would be a commit that cut it back.
    await new Promise((r) => setTimeout(r, 250));
    for (let i = 0; i < 3; i++) insert.run('y');
    const afterCommits = await walSize();
    assert.ok(
      afterCommits >= afterBurst,
      `a commit truncated the WAL on the event loop (${afterBurst} → ${afterCommits})`,
    );
    // Quiet for longer than quietMs: the thread cuts it back (a TRUNCATE checkpoint empties it).
    const deadline = Date.now() + 5000;
    while ((await walSize()) > 256 * 1024 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.ok((await walSize()) <= 256 * 1024, `the WAL is still ${await walSize()} bytes`);
    assert.equal((db.prepare('select count(*) as n from t').get() as { n: number }).n, 2003);
  } finally {
    await checkpointer.stop();
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('writes that never pause still leave the WAL bounded: past the limit a RESTART checkpoint lets the next write start it over', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'guard-checkpoint-'));
  const path = join(dir, 'guard.db');
  const db = openSqlite(path, { checkpoints: false });
  const limit = 1024 * 1024;
  const checkpointer = startCheckpointer(path, { quietMs: 60_000, sizeLimit: limit });
  try {
    db.exec('create table t (id integer primary key, v text)');
    const insert = db.prepare('insert into t (v) values (?)');
    const filler = 'z'.repeat(3000);
    // A commit every millisecond or so (~3 s here), as a server under steady load makes them: a
    // PASSIVE checkpoint never finds the WAL copied back whole, so no write would start it over
    // (without the RESTART the WAL grows to about twice the bytes written).
    let written = 0;
    let largest = 0;
    for (const until = Date.now() + 30_000; written < 24 * limit && Date.now() < until; ) {
      db.exec('begin immediate');
      for (let i = 0; i < 4; i++) insert.run(filler);
      db.exec('commit');
      written += 4 * filler.length;
      if (written % (120 * filler.length) === 0) largest = Math.max(largest, statSync(`${path}-wal`).size);
      await new Promise((r) => setTimeout(r, 1));
    }
    assert.ok(written >= 24 * limit, `wrote only ${written} bytes`);
    assert.ok(largest < 10 * limit, `the WAL reached ${largest} bytes after ${written} written (limit ${limit})`);
    assert.equal((db.prepare('select count(*) as n from t').get() as { n: number }).n, written / filler.length);
  } finally {
    await checkpointer.stop();
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
});
