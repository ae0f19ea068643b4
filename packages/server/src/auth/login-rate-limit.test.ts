// The sign-in limits against a real database (SQLite, or PostgreSQL in the suite's second
// pass): per account and address, per account, per address; two limiters on one database
// stand for two replicas.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openTestDatabase, type TestDatabase } from '../../test/test-database.ts';
import { LoginRateLimiter } from './login-rate-limit.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000);
const LIMITS = { windowMs: 900_000, perPair: 5, perAccount: 50, perAddress: 20 };

describe('login rate limits', () => {
  let test: TestDatabase;
  before(async () => {
    test = await openTestDatabase('login-limits');
  });
  after(() => test?.close());

  it('the fifth failure of an account from one address blocks that address for it until the first leaves the window', async () => {
    const l = new LoginRateLimiter(test.db, LIMITS);
    for (let i = 0; i < 4; i++) await l.failed('a@x', '10.0.0.9', at(i * 10));
    assert.equal(await l.retryAfterSeconds('a@x', '10.0.0.9', at(45)), 0);
    await l.failed('a@x', '10.0.0.9', at(50));
    assert.equal(
      await l.retryAfterSeconds('a@x', '10.0.0.9', at(50)),
      850,
      'until the first failure, at 0 s, is 900 s old',
    );
    assert.equal(await l.retryAfterSeconds('a@x', '10.0.0.9', at(899)), 1);
    assert.equal(await l.retryAfterSeconds('a@x', '10.0.0.9', at(900)), 0, 'the first failure left the window');
    assert.equal(await l.retryAfterSeconds('b@x', '10.0.0.9', at(50)), 0, 'another account is not blocked');
    assert.equal(
      await l.retryAfterSeconds('a@x', '192.0.2.7', at(50)),
      0,
      "the account's owner signs in from another address: a guesser cannot lock them out",
    );
  });

  it('fifty failures of an account from many addresses block it everywhere (distributed guessing)', async () => {
    const l = new LoginRateLimiter(test.db, LIMITS);
    for (let i = 0; i < 49; i++) await l.failed('many@x', `10.1.${Math.floor(i / 4)}.${i % 4}`, at(1000 + i));
    assert.equal(await l.retryAfterSeconds('many@x', '192.0.2.8', at(1049)), 0);
    await l.failed('many@x', '10.9.9.9', at(1049));
    assert.equal(await l.retryAfterSeconds('many@x', '192.0.2.8', at(1050)), 850);
  });

  it('twenty failures from an address block it for every account', async () => {
    const l = new LoginRateLimiter(test.db, LIMITS);
    for (let i = 0; i < 20; i++) await l.failed(`user${i}@x`, '10.2.0.1', at(2000 + i));
    assert.equal(await l.retryAfterSeconds('new@x', '10.2.0.1', at(2020)), 880);
    assert.equal(await l.retryAfterSeconds('new@x', '10.2.0.2', at(2020)), 0);
  });

  it("a success clears the account's and the pair's failures but not the address's", async () => {
    const l = new LoginRateLimiter(test.db, { ...LIMITS, perAddress: 5 });
    for (let i = 0; i < 4; i++) await l.failed('c@x', '10.3.0.1', at(3000 + i));
    await l.succeeded('c@x', '10.3.0.1');
    await l.failed('c@x', '10.3.0.1', at(3005));
    assert.equal(await l.retryAfterSeconds('c@x', '10.3.0.2', at(3006)), 0);
    assert.ok((await l.retryAfterSeconds('c@x', '10.3.0.1', at(3006))) > 0, 'the address saw five failures');
  });

  it('two replicas count the same failures: five through either lock the pair on both', async () => {
    const one = new LoginRateLimiter(test.db, LIMITS);
    // On PostgreSQL a second pool, as a second replica has; one process owns an SQLite file.
    const two = new LoginRateLimiter(test.engine === 'postgres' ? await test.openAnother() : test.db, LIMITS);
    for (let i = 0; i < 5; i++) await (i % 2 === 0 ? one : two).failed('r@x', '10.4.0.1', at(4000 + i));
    assert.ok((await one.retryAfterSeconds('r@x', '10.4.0.1', at(4005))) > 0);
    assert.ok((await two.retryAfterSeconds('r@x', '10.4.0.1', at(4005))) > 0);
  });

  it('keeps no email or address in clear, and drops failures older than the window', async () => {
    const l = new LoginRateLimiter(test.db, LIMITS);
    await l.failed('secret-person@example.com', '203.0.113.200', at(5000));
    const rows = await test.db.selectFrom('login_failures').selectAll().execute();
    const text = JSON.stringify(rows);
    assert.ok(!text.includes('secret-person') && !text.includes('203.0.113.200'));
    await l.failed('later@x', '10.5.0.1', at(5000 + 3600));
    const left = await test.db.selectFrom('login_failures').select('at').execute();
    assert.ok(
      left.every((r) => Date.parse(r.at) > T0 + (5000 + 3600) * 1000 - LIMITS.windowMs),
      JSON.stringify(left),
    );
  });
});
