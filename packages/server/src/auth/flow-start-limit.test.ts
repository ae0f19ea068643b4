import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlowStartLimiter } from './flow-start-limit.ts';

describe('FlowStartLimiter', () => {
  const limits = { perAddress: 3, windowMs: 60_000, maxAddresses: 4 };

  it('lets an address start perAddress sign-ins a window, then says how long until its window ends', () => {
    const limiter = new FlowStartLimiter(limits);
    for (let i = 0; i < 3; i++) assert.equal(limiter.take('198.51.100.1', 1_000 + i), undefined);
    assert.equal(limiter.take('198.51.100.1', 1_500), 60);
    assert.equal(limiter.take('198.51.100.1', 59_000), 2);
    assert.equal(limiter.take('198.51.100.1', 60_999), 1);
    // Another address has a window of its own.
    assert.equal(limiter.take('198.51.100.2', 2_000), undefined);
    // Once the window has ended, a new one begins.
    assert.equal(limiter.take('198.51.100.1', 61_000), undefined);
  });

  it('remembers at most maxAddresses: the ended windows go first, then the oldest', () => {
    const limiter = new FlowStartLimiter(limits);
    for (let i = 0; i < 3; i++) limiter.take('old', 0);
    for (const address of ['a', 'b', 'c']) for (let i = 0; i < 3; i++) limiter.take(address, 30_000);
    // The table is full; 'old' has ended its window and is dropped for the newcomer.
    assert.equal(limiter.take('new', 61_000), undefined);
    assert.equal(limiter.take('a', 61_000), 29, "'a' is still remembered");
    // Full again with live windows: the oldest ('a') goes.
    assert.equal(limiter.take('newer', 62_000), undefined);
    assert.equal(limiter.take('a', 62_000), undefined, "'a' was forgotten: a window of its own begins");
  });
});
