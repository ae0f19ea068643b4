import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LoginRateLimiter } from './login-rate-limit.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000);
const LIMITS = { windowMs: 900_000, perAccount: 5, perAddress: 20 };

describe('login rate limits', () => {
  it('the fifth failure of an account blocks it until the first of them leaves the window', () => {
    const l = new LoginRateLimiter(LIMITS);
    for (let i = 0; i < 4; i++) l.failed('a@x', `10.0.0.${i}`, at(i * 10));
    assert.equal(l.retryAfterSeconds('a@x', '10.0.0.9', at(45)), 0);
    l.failed('a@x', '10.0.0.9', at(50));
    assert.equal(l.retryAfterSeconds('a@x', '10.0.0.9', at(50)), 850, 'until the first failure, at 0 s, is 900 s old');
    assert.equal(l.retryAfterSeconds('a@x', '10.0.0.9', at(899)), 1);
    assert.equal(l.retryAfterSeconds('a@x', '10.0.0.9', at(900)), 0, 'the first failure left the window');
    assert.equal(l.retryAfterSeconds('b@x', '10.0.0.9', at(50)), 0, 'another account is not blocked');
  });

  it('twenty failures from an address block it for every account', () => {
    const l = new LoginRateLimiter(LIMITS);
    for (let i = 0; i < 20; i++) l.failed(`user${i}@x`, '10.0.0.1', at(i));
    assert.equal(l.retryAfterSeconds('new@x', '10.0.0.1', at(20)), 880);
    assert.equal(l.retryAfterSeconds('new@x', '10.0.0.2', at(20)), 0);
  });

  it("a success clears the account's failures but not the address's", () => {
    const l = new LoginRateLimiter({ ...LIMITS, perAddress: 5 });
    for (let i = 0; i < 4; i++) l.failed('a@x', '10.0.0.1', at(i));
    l.succeeded('a@x');
    l.failed('a@x', '10.0.0.1', at(5));
    assert.equal(l.retryAfterSeconds('a@x', '10.0.0.2', at(6)), 0);
    assert.ok(l.retryAfterSeconds('a@x', '10.0.0.1', at(6)) > 0, 'the address saw five failures');
  });
});
