import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStorageFull, isUniqueViolation, isUnreachable, markUnreachable } from './errors.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isUnreachable: a database or object store that cannot be reached right now', () => {
  it('recognises a refused, reset or timed-out connection by its system error code', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EAI_AGAIN'])
      assert.ok(isUnreachable(withCode(code)), code);
  });

  it('recognises PostgreSQL shutting down, starting up, out of connections, or a connection exception (class 08)', () => {
    for (const code of ['57P01', '57P02', '57P03', '53300', '08006', '08001'])
      assert.ok(isUnreachable(withCode(code)), code);
  });

  it('looks through causes and aggregated errors (a connection tried on several addresses)', () => {
    assert.ok(isUnreachable(new Error('bucket guard: TimeoutError', { cause: withCode('ECONNREFUSED') })));
    assert.ok(isUnreachable(new AggregateError([withCode('ECONNREFUSED'), withCode('ENETUNREACH')])));
  });

  it('recognises an error the database layer marked as coming from a lost connection, whatever its text', () => {
    const lost = new Error('Connection terminated unexpectedly');
    assert.equal(isUnreachable(lost), false);
    markUnreachable(lost);
    assert.ok(isUnreachable(lost));
    assert.equal(isUnreachable(new Error('Connection terminated unexpectedly')), false, 'never by message text');
  });

  it('leaves the query’s own errors, full disks and anything else alone', () => {
    for (const e of [
      withCode('23505'), // unique_violation
      withCode('40001'), // serialization_failure
      withCode('ENOSPC'),
      Object.assign(new Error('database or disk is full'), { code: 'ERR_SQLITE_ERROR', errcode: 13 }),
      new TypeError('x is undefined'),
      'ECONNREFUSED',
      undefined,
      null,
    ])
      assert.equal(isUnreachable(e), false, String(e));
  });
});

describe('isStorageFull: a disk with no room for the write', () => {
  it('recognises SQLITE_FULL by its result code and ENOSPC or EDQUOT of a file write, also as a cause', () => {
    assert.ok(isStorageFull(Object.assign(new Error('database or disk is full'), { errcode: 13 })));
    assert.ok(isStorageFull(withCode('ENOSPC')));
    assert.ok(isStorageFull(withCode('EDQUOT')));
    assert.ok(isStorageFull(new Error('upload failed', { cause: withCode('ENOSPC') })));
  });

  it('leaves other SQLite and file errors alone', () => {
    for (const e of [
      Object.assign(new Error('UNIQUE constraint failed'), { errcode: 2067 }),
      Object.assign(new Error('database is locked'), { errcode: 5 }),
      withCode('EACCES'),
      withCode('ECONNREFUSED'),
      new Error('database or disk is full'),
    ])
      assert.equal(isStorageFull(e), false, String(e));
    assert.ok(isUniqueViolation(Object.assign(new Error('x'), { errcode: 2067 })), 'unique violations stay theirs');
  });
});
