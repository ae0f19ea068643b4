import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { advance, allowance, burstOf, nextAllowedMs } from './rate-limit.ts';

/** Starts as many as allowed every `stepMs` for `ms`; returns the start times. */
function simulate(rate: number, stepMs: number, ms: number, backlog = Number.POSITIVE_INFINITY): number[] {
  let tat = 0;
  const starts: number[] = [];
  for (let now = 0; now <= ms && starts.length < backlog; now += stepMs) {
    const n = Math.min(allowance(rate, tat, now), backlog - starts.length);
    for (let i = 0; i < n; i++) starts.push(now);
    if (n > 0) tat = advance(rate, tat, now, n);
  }
  return starts;
}

function maxInWindow(starts: number[], windowMs: number): number {
  let best = 0;
  let j = 0;
  for (let i = 0; i < starts.length; i++) {
    while (starts[i] - starts[j] >= windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

describe('rate limit (GCRA)', () => {
  it('lets a burst of a tenth of a second go at once, at least one', () => {
    assert.equal(burstOf(5), 1);
    assert.equal(burstOf(0.5), 1);
    assert.equal(burstOf(100), 10);
    assert.equal(allowance(100, 0, 1_000), 10);
    assert.equal(allowance(5, 0, 1_000), 1);
  });

  it('spaces deliveries 1/rate apart after the burst', () => {
    const tat = advance(5, 0, 1_000, 1);
    assert.equal(tat, 1_200);
    assert.equal(allowance(5, tat, 1_199), 0);
    assert.equal(allowance(5, tat, 1_200), 1);
    assert.equal(nextAllowedMs(5, tat), 1_200);
    assert.equal(nextAllowedMs(100, advance(100, 0, 0, 10)), 10);
  });

  for (const rate of [0.5, 1, 5, 37, 100, 1000])
    for (const stepMs of [1, 7, 50, 250])
      it(`starts at most rate + burst in any second, and keeps up when claims come once a burst: ${rate}/s, claims every ${stepMs} ms`, () => {
        const seconds = 20;
        const starts = simulate(rate, stepMs, seconds * 1000);
        assert.ok(maxInWindow(starts, 1000) <= rate + burstOf(rate), `max ${maxInWindow(starts, 1000)} in a second`);
        const expected = rate * seconds;
        // The worker claims again when the next delivery is allowed (the queue's wake-up timer).
        if (stepMs <= (burstOf(rate) * 1000) / rate)
          assert.ok(starts.length >= expected * 0.95 - 1, `${starts.length} started, ${expected} expected`);
        assert.ok(starts.length <= expected + burstOf(rate) + 1, `${starts.length} started, ${expected} expected`);
      });

  it('does not bank unused time beyond the burst', () => {
    // Idle for a minute, then a backlog: the first second still sees rate + burst at most.
    const tat = advance(10, 0, 0, 1);
    assert.equal(allowance(10, tat, 60_000), burstOf(10));
  });
});
