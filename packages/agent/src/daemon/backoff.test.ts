import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RECONNECT_BASE_MS, RECONNECT_MAX_MS, reconnectDelay } from './backoff.ts';

describe('reconnectDelay', () => {
  it('doubles from 1 s: the lowest draw is half of each ceiling, the highest just under it', () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => reconnectDelay(n, () => 0)),
      [500, 1000, 2000, 4000],
    );
    assert.deepEqual(
      [1, 2, 3].map((n) => reconnectDelay(n, () => 0.999999)),
      [999, 1999, 3999],
    );
  });

  it('stops growing at 60 s, however long the service stays away', () => {
    assert.equal(
      reconnectDelay(7, () => 0),
      RECONNECT_MAX_MS / 2,
    );
    assert.equal(
      reconnectDelay(1000, () => 0),
      RECONNECT_MAX_MS / 2,
    );
  });

  it('always lies in [ceiling/2, ceiling) of its attempt (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, r) => {
        const ceiling = Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** Math.min(n - 1, 30));
        const d = reconnectDelay(n, () => r);
        return d >= ceiling / 2 && d < ceiling;
      }),
    );
  });

  it('spreads agents that failed together: different draws give different delays', () => {
    assert.notEqual(
      reconnectDelay(5, () => 0.1),
      reconnectDelay(5, () => 0.9),
    );
  });

  it('refuses a failure count that is not a positive integer', () => {
    for (const n of [0, -1, 1.5, Number.NaN]) assert.throws(() => reconnectDelay(n, Math.random), RangeError);
  });
});
