import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseHttpDate, parseRetryAfter } from './retry-after.ts';

const now = Date.parse('2026-11-21T10:00:00Z');

describe('parseRetryAfter', () => {
  it('reads delay-seconds', () => {
    assert.equal(parseRetryAfter('0', now), 0);
    assert.equal(parseRetryAfter('3', now), 3000);
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 120 ', now), 120_000);
    assert.equal(parseRetryAfter(' 5 ', now), 5_000);
    assert.equal(parseRetryAfter('9999999999', now), 9_999_999_999_000);
  });

  it('reads the first of a list of values', () => {
    assert.equal(parseRetryAfter(['2', '9'], now), 2000);
  });

  it('reads an HTTP-date as the time left until it, and a past date as 0', () => {
    assert.equal(parseRetryAfter('Sat, 21 Nov 2026 10:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Sat, 21 Nov 2026 10:01:30 GMT', now), 90_000);
    assert.equal(parseRetryAfter('Sat, 21 Nov 2026 09:00:00 GMT', now), 0);
  });

  it('reads the obsolete rfc850 and asctime forms of an HTTP-date', () => {
    assert.equal(parseRetryAfter('Saturday, 21-Nov-26 10:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Sat Nov 21 10:00:05 2026', now), 5000);
  });

  it('ignores absent and malformed values', () => {
    for (const v of [
      undefined,
      '',
      '  ',
      '   ',
      '-1',
      '1.5',
      'soon',
      '2026-11-21T10:00:05Z',
      '5s',
      '1e3',
      '0x10',
      '99999999999',
    ])
      assert.equal(parseRetryAfter(v, now), undefined, JSON.stringify(v));
  });

  it('ignores dates that only look like HTTP-dates', () => {
    for (const v of [
      'Sat, 21 Nov 2026 10:00:05 UTC', // the zone is always GMT
      'sat, 21 nov 2026 10:00:05 GMT', // HTTP-date is case-sensitive
      'Sat, 31 Apr 2026 10:00:05 GMT', // April has 30 days
      'Sat, 21 Nov 2026 24:00:00 GMT',
      'Sat, 21 Nov 2026 10:60:00 GMT',
      'Sat, 1 Nov 2026 10:00:05 GMT', // IMF-fixdate's day has two digits
      'Sat, 21 Nov 26 10:00:05 GMT',
      'Sat, 21-Nov-26 10:00:05 GMT', // rfc850 names the whole day
      'Caturday, 21-Nov-26 10:00:05 GMT',
      'Sat Nov 21 10:00:05 2026 GMT',
      'Xyz, 21 Nov 2026 10:00:05 GMT',
      'Sat, 21 Nov 2026 10:00:05 GMT garbage',
    ])
      assert.equal(parseRetryAfter(v, now), undefined, v);
  });

  it('never yields a negative or infinite delay', () => {
    fc.assert(
      fc.property(fc.string(), (v) => {
        const ms = parseRetryAfter(v, now);
        assert.ok(ms === undefined || (Number.isFinite(ms) && ms >= 0), `${JSON.stringify(v)} → ${ms}`);
      }),
    );
  });

  it('reads every delay-seconds of up to ten digits exactly (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9_999_999_999 }), (n) => parseRetryAfter(String(n), now) === n * 1000),
    );
  });
});

describe('parseHttpDate', () => {
  it('reads the three forms as the same instant (RFC 9110 §5.6.7 example)', () => {
    const want = Date.parse('1994-11-06T08:49:37Z');
    assert.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', now), want);
    assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', now), want);
    assert.equal(parseHttpDate('Sun Nov  6 08:49:37 1994', now), want);
  });

  it('reads a two-digit year more than 50 years ahead as the last century', () => {
    assert.equal(parseHttpDate('Friday, 01-Jan-76 00:00:00 GMT', now), Date.parse('2076-01-01T00:00:00Z'));
    assert.equal(parseHttpDate('Thursday, 01-Jan-77 00:00:00 GMT', now), Date.parse('1977-01-01T00:00:00Z'));
  });

  it('accepts a leap second and 29 February of a leap year', () => {
    assert.equal(parseHttpDate('Sat, 31 Dec 2016 23:59:60 GMT', now), Date.parse('2017-01-01T00:00:00Z'));
    assert.equal(parseHttpDate('Thu, 29 Feb 2024 12:00:00 GMT', now), Date.parse('2024-02-29T12:00:00Z'));
    assert.equal(parseHttpDate('Mon, 29 Feb 2027 12:00:00 GMT', now), undefined);
  });

  it('reads four-digit years below 100 as written', () => {
    assert.equal(parseHttpDate('Fri, 01 Jan 0094 00:00:00 GMT', now), Date.parse('0094-01-01T00:00:00Z'));
  });
});
