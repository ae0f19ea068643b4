import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventLine, MAX_RETRY_MS, reconnectDelay } from './listen-session.ts';

describe('listen session', () => {
  it("waits the stream's retry before reconnecting, doubled per failed try, at most 30 s, within ±20 %", () => {
    const mid = () => 0.5;
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 10].map((n) => reconnectDelay(n, 2000, mid)),
      [2000, 4000, 8000, 16000, 30000, 30000, 30000],
    );
    assert.equal(
      reconnectDelay(1, 2000, () => 0),
      1600,
    );
    assert.equal(
      reconnectDelay(1, 2000, () => 1),
      2400,
    );
    assert.equal(
      reconnectDelay(40, 2000, () => 1),
      MAX_RETRY_MS * 1.2,
    );
  });

  it('prints one line per event: time, event type, id, outcome, latency', () => {
    const at = new Date('2026-11-21T10:00:00.123Z');
    assert.equal(
      eventLine(at, 'signal_created', 'sig_1', '200', 12),
      '2026-11-21T10:00:00.123Z  signal_created  sig_1  200  12 ms',
    );
    assert.equal(
      eventLine(at, 'signal_created', 'sig_1', 'not forwarded', undefined),
      '2026-11-21T10:00:00.123Z  signal_created  sig_1  not forwarded',
    );
  });
});
