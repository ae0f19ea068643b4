import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { selectSegments } from './select-segments.ts';

const MiB = 1024 * 1024;
const CAP = 180 * MiB;

describe('selectSegments', () => {
  test('takes every segment when all fit', () => {
    const r = selectSegments(
      [
        { name: 'a.1.gz', size: 10 * MiB },
        { name: 'a.2.gz', size: 20 * MiB },
      ],
      5 * MiB,
      CAP,
    );
    assert.deepEqual(r, { taken: ['a.1.gz', 'a.2.gz'], trimmed: [], total: 35 * MiB });
  });

  test('trims the segment that would cross the cap and takes an older, smaller one that fits', () => {
    const r = selectSegments(
      [
        { name: 'a.1.gz', size: 100 * MiB },
        { name: 'a.2.gz', size: 75 * MiB },
        { name: 'a.3.gz', size: 5 * MiB },
        { name: 'a.4.gz', size: 1 * MiB },
      ],
      8 * MiB,
      CAP,
    );
    assert.deepEqual(r.taken, ['a.1.gz', 'a.3.gz', 'a.4.gz']);
    assert.deepEqual(r.trimmed, ['a.2.gz']);
    assert.equal(r.total, 114 * MiB);
  });

  test('a segment that lands exactly on the cap is taken', () => {
    const r = selectSegments([{ name: 'a.1.gz', size: CAP - 1000 }], 1000, CAP);
    assert.deepEqual(r.taken, ['a.1.gz']);
    assert.equal(r.total, CAP);
  });

  test('one byte over the cap is trimmed', () => {
    const r = selectSegments([{ name: 'a.1.gz', size: CAP - 999 }], 1000, CAP);
    assert.deepEqual(r.trimmed, ['a.1.gz']);
  });

  test('keeps newest-first order in both lists', () => {
    const r = selectSegments(
      ['1', '2', '3', '4', '5'].map((n, i) => ({ name: `a.${n}.gz`, size: (i % 2 ? 100 : 10) * MiB })),
      0,
      CAP,
    );
    assert.deepEqual(r.taken, ['a.1.gz', 'a.2.gz', 'a.3.gz', 'a.5.gz']);
    assert.deepEqual(r.trimmed, ['a.4.gz']);
  });

  test('property: the total never exceeds the cap, every segment is taken or trimmed, and a trimmed one never fit', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 100 * MiB }), { maxLength: 30 }), fc.nat({ max: CAP }), (sizes, base) => {
        const segments = sizes.map((size, i) => ({ name: `s.${i + 1}.gz`, size }));
        const r = selectSegments(segments, base, CAP);
        assert.ok(r.total <= Math.max(CAP, base));
        assert.equal(r.taken.length + r.trimmed.length, segments.length);
        // Greedy newest-first: replaying the decisions, each trimmed segment would have crossed the cap.
        let total = base;
        for (const s of segments) {
          if (r.taken.includes(s.name)) total += s.size;
          else assert.ok(total + s.size > CAP, `${s.name} would have fit`);
        }
        assert.equal(total, r.total);
      }),
      { numRuns: 500 },
    );
  });
});
