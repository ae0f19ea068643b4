// The parser against the examples of the WHATWG HTML standard ("Server-sent events") and
// the ways a stream arrives in pieces.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseParser } from './sse-parser.ts';

const all = (text: string) => new SseParser().push(text);

describe('SseParser', () => {
  it('joins data lines with a line feed and dispatches on an empty line', () => {
    assert.deepEqual(all('data: YHOO\ndata: +2\ndata: 10\n\n'), [
      { event: 'message', data: 'YHOO\n+2\n10', lastEventId: '' },
    ]);
  });

  it('keeps the last event id across events that carry none, and ignores comments', () => {
    const text = ': test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n';
    assert.deepEqual(all(text), [
      { event: 'message', data: 'first event', lastEventId: '1' },
      { event: 'message', data: 'second event', lastEventId: '' },
      { event: 'message', data: ' third event', lastEventId: '' },
    ]);
  });

  it('dispatches nothing for an event without data, and names events by their event field', () => {
    assert.deepEqual(all('data\n\ndata\ndata\n\ndata:\n'), [
      { event: 'message', data: '', lastEventId: '' },
      { event: 'message', data: '\n', lastEventId: '' },
    ]);
    assert.deepEqual(all('event: ready\nevent: bye\ndata: {}\n\nid: x\n\n'), [
      { event: 'bye', data: '{}', lastEventId: '' },
    ]);
  });

  it('ends lines at CRLF, LF or CR, also when a CRLF is split between two chunks', () => {
    assert.deepEqual(all('id: a\r\ndata: 1\r\n\r\nid: b\rdata: 2\r\rdata: 3\n\n'), [
      { event: 'message', data: '1', lastEventId: 'a' },
      { event: 'message', data: '2', lastEventId: 'b' },
      { event: 'message', data: '3', lastEventId: 'b' },
    ]);
    const p = new SseParser();
    assert.deepEqual(p.push('data: 1\r'), []);
    assert.deepEqual(p.push('\n\r'), [{ event: 'message', data: '1', lastEventId: '' }]);
    assert.deepEqual(p.push('\ndata: 2\n\n'), [{ event: 'message', data: '2', lastEventId: '' }]);
  });

  it('reads a stream cut at every byte as it reads it whole', () => {
    const text =
      '\ufeffretry: 1500\nid: sig_1\nevent: signal_created\ndata: {"a":1}\n\n: heartbeat\n\nevent: bye\ndata: {}\n\n';
    const whole = all(text);
    const p = new SseParser();
    const pieces = [...text].flatMap((c) => p.push(c));
    assert.deepEqual(pieces, whole);
    assert.equal(whole.length, 2);
    assert.equal(p.retryMs, 1500);
    assert.equal(p.lastEventId, 'sig_1');
  });

  it('ignores an id holding NUL, a retry that is not digits, and unknown fields', () => {
    const p = new SseParser();
    assert.deepEqual(p.push('id: ok\n\nid: a\0b\nretry: 12s\nfoo: bar\ndata: x\n\n'), [
      { event: 'message', data: 'x', lastEventId: 'ok' },
    ]);
    assert.equal(p.retryMs, undefined);
  });
});
