import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseParser } from '../../../../listen/src/sse-parser.ts';
import { sseComment, sseEvent, sseRetry } from './sse.ts';

describe('SSE framing', () => {
  it('writes id, event and data lines ended by an empty line', () => {
    assert.equal(
      sseEvent({ id: 'sig_1', event: 'signal_created', data: '{"a":1}' }),
      'id: sig_1\nevent: signal_created\ndata: {"a":1}\n\n',
    );
    assert.equal(sseEvent({ data: 'x' }), 'data: x\n\n');
  });

  it('spreads data with line breaks over several data lines, which a client joins again', () => {
    const text = sseEvent({ event: 'e', data: 'one\ntwo\r\nthree' });
    assert.equal(text, 'event: e\ndata: one\ndata: two\ndata: three\n\n');
    assert.deepEqual(new SseParser().push(text), [{ event: 'e', data: 'one\ntwo\nthree', lastEventId: '' }]);
  });

  it('refuses a line break in an id or an event name', () => {
    assert.throws(() => sseEvent({ id: 'a\nb', data: '' }), /line break/);
    assert.throws(() => sseEvent({ event: 'a\rb', data: '' }), /line break/);
  });

  it('writes comments and retry as a client ignores and takes them', () => {
    const p = new SseParser();
    const comments: string[] = [];
    assert.deepEqual(
      p.push(sseComment('heartbeat\nnow') + sseRetry(2000.7), (c) => comments.push(c)),
      [],
    );
    assert.deepEqual(comments, ['heartbeat now']);
    assert.equal(p.retryMs, 2000);
  });
});
