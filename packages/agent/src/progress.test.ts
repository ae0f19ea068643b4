import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { createProgress, formatBytes, SILENT_PROGRESS } from './progress.ts';

function fakeStream(isTTY: boolean): NodeJS.WriteStream & { text: () => string } {
  const s = new PassThrough() as unknown as NodeJS.WriteStream & { text: () => string };
  let out = '';
  (s as unknown as PassThrough).on('data', (c: Buffer) => {
    out += c.toString();
  });
  Object.assign(s, { isTTY, columns: 80, text: () => out });
  return s;
}

test('draws nothing when the stream is not a TTY', () => {
  assert.equal(createProgress(fakeStream(false)), SILENT_PROGRESS);
});

test('draws a bar with percentage and phase on a TTY and erases it when done', async () => {
  const s = fakeStream(true);
  let t = 0;
  const p = createProgress(s, () => (t += 1000));
  p.grow(2048);
  p.phase('redacting agent.log');
  p.advance(1024);
  p.done();
  await new Promise((r) => setImmediate(r));
  assert.match(s.text(), /50% 1\.0 KiB\/2\.0 KiB redacting agent\.log/);
  assert.ok(s.text().endsWith('\r\x1b[K'));
});

test('formats sizes in binary units', () => {
  assert.equal(formatBytes(999), '999 B');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(180 * 1024 * 1024), '180 MiB');
});
