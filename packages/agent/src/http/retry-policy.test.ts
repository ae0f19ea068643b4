import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  BASE_DELAY_MS,
  decideRetry,
  isRetryableStatus,
  MAX_ATTEMPTS,
  MAX_DELAY_MS,
  MAX_RETRY_AFTER_MS,
  nextDelay,
} from './retry-policy.ts';

describe('nextDelay', () => {
  it('doubles the ceiling per attempt and keeps at least half of it (equal jitter)', () => {
    assert.equal(
      nextDelay(1, () => 0),
      BASE_DELAY_MS / 2,
    );
    assert.equal(
      nextDelay(1, () => 0.999999),
      BASE_DELAY_MS - 1,
    );
    assert.equal(
      nextDelay(2, () => 0),
      BASE_DELAY_MS,
    );
    assert.equal(
      nextDelay(3, () => 0),
      2 * BASE_DELAY_MS,
    );
    assert.equal(
      nextDelay(3, () => 0.5),
      3 * BASE_DELAY_MS,
    );
  });

  it('never exceeds MAX_DELAY_MS, however many attempts', () => {
    assert.equal(
      nextDelay(60, () => 0),
      MAX_DELAY_MS / 2,
    );
    assert.ok(nextDelay(1000, () => 0.9999) < MAX_DELAY_MS);
  });

  it('stays in [ceiling/2, ceiling) for every attempt and random value (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0, max: 1, noNaN: true }), (attempt, r) => {
        const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1));
        const d = nextDelay(attempt, () => r);
        return Number.isInteger(d) && d >= ceiling / 2 && d < ceiling;
      }),
    );
  });

  it('is monotonic in the random value', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (attempt, a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          return nextDelay(attempt, () => lo) <= nextDelay(attempt, () => hi);
        },
      ),
    );
  });

  it('clamps a random source that strays outside [0, 1)', () => {
    assert.equal(
      nextDelay(1, () => -5),
      BASE_DELAY_MS / 2,
    );
    assert.ok(nextDelay(1, () => 7) < BASE_DELAY_MS);
  });

  it('refuses an attempt number below 1 or not an integer', () => {
    assert.throws(() => nextDelay(0, Math.random), RangeError);
    assert.throws(() => nextDelay(1.5, Math.random), RangeError);
  });
});

describe('isRetryableStatus', () => {
  it('retries 429 and every 5xx, never another 4xx or a 2xx/3xx', () => {
    for (const s of [429, 500, 502, 503, 504, 599]) assert.equal(isRetryableStatus(s), true, String(s));
    for (const s of [200, 201, 301, 400, 401, 403, 404, 409, 411, 413, 428, 430, 499, 600])
      assert.equal(isRetryableStatus(s), false, String(s));
  });
});

describe('decideRetry', () => {
  const base = { random: () => 0, nowMs: 1_000_000 };
  it('retries up to MAX_ATTEMPTS tries in all', () => {
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++)
      assert.deepEqual(decideRetry({ ...base, attempt }), { retry: true, delayMs: nextDelay(attempt, () => 0) });
    const last = decideRetry({ ...base, attempt: MAX_ATTEMPTS });
    assert.equal(last.retry, false);
    assert.match((last as { reason: string }).reason, new RegExp(`after ${MAX_ATTEMPTS} attempts`));
  });
  it('honours Retry-After in place of the backoff, including 0', () => {
    assert.deepEqual(decideRetry({ ...base, attempt: 1, retryAfterMs: 7000 }), { retry: true, delayMs: 7000 });
    assert.deepEqual(decideRetry({ ...base, attempt: 2, retryAfterMs: 0 }), { retry: true, delayMs: 0 });
  });
  it('gives up, saying so, when Retry-After is longer than MAX_RETRY_AFTER_MS', () => {
    const d = decideRetry({ ...base, attempt: 1, retryAfterMs: MAX_RETRY_AFTER_MS + 1000 });
    assert.equal(d.retry, false);
    assert.match((d as { reason: string }).reason, /retry after 61 s/);
  });
  it('does not start a retry at or after the deadline (an expired presigned URL)', () => {
    const delay = nextDelay(1, () => 0);
    assert.equal(decideRetry({ ...base, attempt: 1, deadlineMs: base.nowMs + delay + 1 }).retry, true);
    const d = decideRetry({ ...base, attempt: 1, deadlineMs: base.nowMs + delay });
    assert.equal(d.retry, false);
    assert.match((d as { reason: string }).reason, /expires/);
    assert.equal(decideRetry({ ...base, attempt: 1, retryAfterMs: 5000, deadlineMs: base.nowMs + 4000 }).retry, false);
  });
  it('takes a smaller maxAttempts', () => {
    assert.equal(decideRetry({ ...base, attempt: 1, maxAttempts: 1 }).retry, false);
  });
});
