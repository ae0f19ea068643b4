import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SETTINGS } from '../config.ts';
import { DEFAULT_RETRY_SCHEDULE_MS, JITTER, nextRetryDelay, RETRY_AFTER_MAX_MS } from './retry-schedule.ts';
import { parseSchedule } from './settings.ts';

const SCHEDULE = [0, 5_000, 300_000, 1_800_000];
/** The largest value Math.random can return. */
const ALMOST_ONE = 1 - 2 ** -53;

describe('nextRetryDelay', () => {
  it('waits schedule[attempts so far], jittered within ±20 %', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 36_000_000 }), { minLength: 1, maxLength: 10 }),
        fc.nat(),
        fc.double({ min: 0, max: ALMOST_ONE, noNaN: true }),
        (schedule, n, r) => {
          const attempts = n % schedule.length;
          const delay = nextRetryDelay(schedule, attempts, () => r) as number;
          const base = schedule[attempts];
          assert.ok(Number.isInteger(delay));
          assert.ok(delay >= Math.floor(base * (1 - JITTER)) && delay <= Math.ceil(base * (1 + JITTER)), `${delay}`);
        },
      ),
    );
  });

  it('reaches both ends of the jitter band and its middle', () => {
    assert.equal(JITTER, 0.2);
    assert.equal(
      nextRetryDelay(SCHEDULE, 1, () => 0),
      4_000,
    );
    assert.equal(
      nextRetryDelay(SCHEDULE, 1, () => 0.5),
      5_000,
    );
    assert.equal(
      nextRetryDelay(SCHEDULE, 1, () => ALMOST_ONE),
      6_000,
    );
  });

  it('makes the first try at once: a zero entry stays zero whatever the jitter', () => {
    for (const r of [0, 0.3, ALMOST_ONE])
      assert.equal(
        nextRetryDelay(SCHEDULE, 0, () => r),
        0,
      );
  });

  it('is exhausted after the last entry: undefined means the delivery is failed', () => {
    assert.equal(
      nextRetryDelay(SCHEDULE, SCHEDULE.length - 1, () => 0.5),
      1_800_000,
    );
    assert.equal(
      nextRetryDelay(SCHEDULE, SCHEDULE.length, () => 0.5),
      undefined,
    );
    assert.equal(
      nextRetryDelay(SCHEDULE, SCHEDULE.length + 5, () => 0.5),
      undefined,
    );
    assert.equal(
      nextRetryDelay([0], 1, () => 0.5),
      undefined,
    );
  });

  it('honours a Retry-After only when it asks for longer than the jittered wait', () => {
    assert.equal(
      nextRetryDelay(SCHEDULE, 1, () => 0.5, 60_000),
      60_000,
    );
    assert.equal(
      nextRetryDelay(SCHEDULE, 1, () => 0.5, 1_000),
      5_000,
      'a shorter Retry-After does not hurry',
    );
    assert.equal(
      nextRetryDelay(SCHEDULE, 1, () => 0.5, 0),
      5_000,
    );
    assert.equal(
      nextRetryDelay(SCHEDULE, 0, () => 0.5, 2_000),
      2_000,
    );
  });

  it('caps a Retry-After at 24 h', () => {
    assert.equal(RETRY_AFTER_MAX_MS, 24 * 3600 * 1000);
    assert.equal(
      nextRetryDelay(SCHEDULE, 1, () => 0.5, 7 * 24 * 3600 * 1000),
      RETRY_AFTER_MAX_MS,
    );
  });

  it('does not extend an exhausted schedule because of a Retry-After', () => {
    assert.equal(
      nextRetryDelay(SCHEDULE, SCHEDULE.length, () => 0.5, 1_000),
      undefined,
    );
  });
});

describe('parseSchedule', () => {
  it('reads ms, s, m and h entries, bare numbers being milliseconds', () => {
    assert.deepEqual(parseSchedule('0,200ms,400ms'), [0, 200, 400]);
    assert.deepEqual(parseSchedule('0,5s,5m,30m,2h'), [0, 5_000, 300_000, 1_800_000, 7_200_000]);
    assert.deepEqual(parseSchedule(' 250 , 1s '), [250, 1_000]);
  });

  it('matches the documented default: about immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    const setting = SETTINGS.find((s) => s.flag === 'webhook-retry-schedule');
    assert.ok(setting);
    assert.deepEqual(parseSchedule(setting.default), DEFAULT_RETRY_SCHEDULE_MS);
    assert.deepEqual(DEFAULT_RETRY_SCHEDULE_MS, [0, 5e3, 3e5, 1.8e6, 7.2e6, 1.8e7, 3.6e7, 3.6e7]);
  });

  it('refuses malformed entries, naming them', () => {
    for (const bad of ['', '5x', '-1', '1.5s', '5 s', '1d', '0,,5s', 'five'])
      assert.throws(() => parseSchedule(bad), /bad retry schedule entry/, JSON.stringify(bad));
  });
});
