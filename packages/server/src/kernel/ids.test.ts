import assert from 'node:assert/strict';
import { test } from 'node:test';
import { timeOrderedId, timeOrderedUuid } from './ids.ts';

test('timeOrderedUuid is an RFC 9562 version 7 UUID carrying the time', () => {
  const ms = Date.UTC(2026, 10, 21, 12, 0, 0, 123);
  const id = timeOrderedUuid(ms);
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16), ms);
});

test('ids sort by creation time and do not repeat', () => {
  const seen = new Set<string>();
  let previous = '';
  for (let i = 0; i < 5000; i++) {
    const id = timeOrderedId('sig', 1_700_000_000_000 + Math.floor(i / 10));
    assert.match(id, /^sig_[0-9a-f]{32}$/);
    assert.ok(!seen.has(id));
    seen.add(id);
    if (i % 10 === 0) assert.ok(id > previous, 'a later millisecond sorts after every earlier id');
    previous = id.slice(0, 16) + 'f'.repeat(20);
  }
});
