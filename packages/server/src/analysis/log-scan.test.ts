import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LogScanner, MAX_LINE_BYTES, messageKey, parseLine } from './log-scan.ts';

const T = (s: number) => new Date(Date.UTC(2026, 10, 21, 8, 0, s)).toISOString();
const slog0 = (level: string, msg: string) => `time=${T(0)} level=${level} msg="${msg}"`;
const LOG = [
  `time=${T(0)} level=INFO msg="guard-agent starting" version=0.3.0`,
  `time=${T(1)} level=ERROR msg="probe detach failed" err="permission denied" pid=1003`,
  `{"time":"${T(2)}","level":"WARN","msg":"upload retry","attempt":2}`,
  `time=${T(3)} level=INFO msg="heartbeat ERROR-free"`,
  `{"time":"${T(4)}","level":"ERROR","msg":"probe detach failed","pid":1012}`,
  `time=${T(5)} level=ERROR msg="disk full on /var/lib/guard"`,
  'panic: runtime error: invalid memory address or nil pointer dereference',
  'goroutine 1 [running]:',
  'main.main()',
  `time=${T(9)} level=INFO msg="guard-agent starting" version=0.3.0`,
  `time=${T(10)} level=ERROR msg="probe detach failed" pid=1044`,
  `time=${T(11)} level=INFO msg=done`,
].join('\n');

function scan(text: string, chunk: number): ReturnType<LogScanner['end']> {
  const s = new LogScanner('agent.log');
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += chunk) s.push(bytes.subarray(at, at + chunk));
  return s.end();
}

describe('LogScanner', () => {
  it('counts lines, ERROR and WARN lines (slog and JSON), and times the log', () => {
    const s = scan(`${LOG}\n`, 1 << 20);
    assert.equal(s.lines, 12);
    assert.equal(s.errors, 4);
    assert.equal(s.warnings, 1);
    assert.equal(s.firstTime, T(0));
    assert.equal(s.lastTime, T(11));
  });

  it('groups error messages, with where they first and last occur', () => {
    const s = scan(LOG, 1 << 20);
    const detach = s.messages.get('probe detach failed');
    assert.deepEqual(detach, {
      message: 'probe detach failed',
      count: 3,
      first: { line: 2, time: T(1) },
      last: { line: 11, time: T(10) },
    });
    assert.equal(s.messages.get('disk full on /var/lib/guard')?.count, 1);
  });

  it('finds agent starts and crash traces (one trace, however many lines it has)', () => {
    const s = scan(LOG, 1 << 20);
    assert.deepEqual(
      s.starts.map((x) => x.line),
      [1, 10],
    );
    assert.equal(s.crashCount, 1);
    assert.equal(s.crashes[0].line, 7);
    assert.match(s.crashes[0].text, /^panic: runtime error/);
  });

  it('a fatal error trace is found from its goroutine line, and starts at the fatal error line', () => {
    const s = scan(
      [
        slog0('INFO', 'ok'),
        'fatal error: concurrent map writes',
        '',
        'goroutine 34 [running]:',
        'runtime.throw()',
        slog0('INFO', 'x'),
      ].join('\n'),
      1 << 20,
    );
    assert.equal(s.crashCount, 1);
    assert.deepEqual(
      s.crashes.map((c) => [c.line, c.text]),
      [[2, 'fatal error: concurrent map writes']],
    );
  });

  it('gives the same answer whatever the chunking (property)', () => {
    const whole = scan(LOG, 1 << 20);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), (chunk) => {
        const s = scan(LOG, chunk);
        assert.equal(s.lines, whole.lines);
        assert.equal(s.errors, whole.errors);
        assert.equal(s.warnings, whole.warnings);
        assert.deepEqual(s.messages, whole.messages);
        assert.deepEqual(s.starts, whole.starts);
        assert.deepEqual(s.crashes, whole.crashes);
        assert.equal(s.lastTime, whole.lastTime);
      }),
      { numRuns: 200 },
    );
  });

  it('reads a line longer than its limit as its beginning, and counts it', () => {
    const long = `time=${T(1)} level=ERROR msg="huge" data=${'x'.repeat(MAX_LINE_BYTES * 3)}`;
    const s = scan(`${long}\n${long}\nlast\n`, 65_537);
    assert.equal(s.lines, 3);
    assert.equal(s.errors, 2);
    assert.equal(s.longLines, 2);
  });

  it('an empty member, and one without a final newline', () => {
    assert.equal(scan('', 10).lines, 0);
    assert.equal(scan('a\nb', 10).lines, 2);
  });

  it('folds numbers and hex into one message key', () => {
    assert.equal(messageKey('retry 3 of 5 for deadbeefcafe'), messageKey('retry 4 of 5 for 0123456789ab'));
    assert.notEqual(messageKey('probe attach failed'), messageKey('probe detach failed'));
  });

  it('parses quoted and bare slog values and JSON lines', () => {
    assert.deepEqual(parseLine(`time=${T(1)} level=ERROR msg="say \\"hi\\"" k=v`), {
      level: 'ERROR',
      time: T(1),
      msg: 'say "hi"',
    });
    assert.deepEqual(parseLine(`time=${T(1)} level=INFO msg=bare`), { level: 'INFO', time: T(1), msg: 'bare' });
    assert.deepEqual(parseLine(`{"level":"ERROR","time":"${T(1)}","msg":"a\\nb"}`), {
      level: 'ERROR',
      time: T(1),
      msg: 'a\nb',
    });
  });

  // Issue 19, finding 1: a 1,006-byte bundle inflating to 15 lines of 1 MiB full of `rting`
  // took 35 s, each needle scanning back to its line's start. The bytes the scan reads are
  // counted on the chunk itself (its indexOf and lastIndexOf), so the bound is exact, not timed.
  for (const [name, unit] of [
    ['`rting` (the start needle)', 'rting'],
    ['`panic: `', 'panic: '],
    ['`[running]:` (the crash needle)', '[running]:'],
    ['level=ERROR', 'level=ERROR '],
    ['level=WARN', 'level=WARN '],
  ]) {
    it(`reads a line full of ${name} a bounded number of times: linear in the text`, () => {
      const line = unit.repeat(Math.ceil((1 << 20) / unit.length));
      const chunk = Buffer.from(`${line}\n`.repeat(15));
      let scanned = 0;
      const indexOf = chunk.indexOf.bind(chunk);
      const lastIndexOf = chunk.lastIndexOf.bind(chunk);
      Object.assign(chunk, {
        indexOf(value: Buffer | number, from = 0) {
          const at = indexOf(value, from);
          scanned += (at === -1 ? chunk.length : at) - from;
          return at;
        },
        lastIndexOf(value: Buffer | number, from = chunk.length) {
          const at = lastIndexOf(value, from);
          scanned += from - at;
          return at;
        },
      });
      const scanner = new LogScanner('agent.log');
      scanner.push(chunk);
      const s = scanner.end();
      assert.equal(s.lines, 15);
      assert.ok(
        scanned <= 16 * chunk.length,
        `the scan read ${(scanned / chunk.length).toFixed(1)}× the text (${scanned} bytes for ${chunk.length})`,
      );
    });
  }
});
