import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { createProgress, formatBytes, REDRAW_MS, renderLine, SILENT_PROGRESS } from './progress.ts';

const UP_AND_ERASE = '\x1b[1A\r\x1b[2K';

/** A terminal stand-in: records what is written, has a width, emits 'resize' like a tty.WriteStream. */
class Terminal extends EventEmitter {
  isTTY: boolean;
  columns: number;
  out = '';
  constructor(isTTY: boolean, columns = 80) {
    super();
    this.isTTY = isTTY;
    this.columns = columns;
  }
  write(text: string): boolean {
    this.out += text;
    return true;
  }
  resize(columns: number): void {
    this.columns = columns;
    this.emit('resize');
  }
  /**
   * The screen as a terminal without wrapping shows it (each write applied, cursor moves
   * honoured), without its empty rows at the bottom; asserts that the cursor sits at the
   * start of a line, as it must between draws.
   */
  screen(): string[] {
    const lines: string[] = [''];
    let row = 0;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: parsing the escapes is the point
    for (const token of this.out.match(/\x1b\[1A|\x1b\[2K|\r|\n|[^\x1b\r\n]+/g) ?? []) {
      if (token === '\x1b[1A') row = Math.max(0, row - 1);
      else if (token === '\x1b[2K') lines[row] = '';
      else if (token === '\r') continue;
      else if (token === '\n') {
        row++;
        lines[row] ??= '';
      } else lines[row] += token;
    }
    assert.equal(lines[row], '', `the cursor is not at the start of a line: ${JSON.stringify(this.out)}`);
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    return lines;
  }
}

function tty(columns = 80): Terminal & NodeJS.WriteStream {
  return new Terminal(true, columns) as Terminal & NodeJS.WriteStream;
}

/** A clock that moves REDRAW_MS on each call: every advance draws. */
function steppingClock(): () => number {
  let t = 0;
  return () => (t += REDRAW_MS);
}

describe('renderLine', () => {
  const state = { done: 3 * 1024 * 1024, total: 6 * 1024 * 1024, label: '[3/4] uploading' };

  it('bar, percentage, bytes and label in a wide terminal', () => {
    assert.equal(renderLine(state, 80), `${'█'.repeat(12)}${'░'.repeat(12)}  50% 3.0 MiB/6.0 MiB [3/4] uploading`);
  });

  it('never reaches the last column, whatever the width', () => {
    const long = { ...state, label: `redacting ${'agent.log.'.repeat(30)}7.gz` };
    for (let columns = 1; columns <= 200; columns++)
      assert.ok(renderLine(long, columns).length <= Math.max(1, columns - 1), `${columns} columns`);
  });

  it('narrows the bar, then cuts the label; the figures stay whole', () => {
    const long = { ...state, label: 'redacting agent.log.12.gz and more words' };
    assert.equal(
      renderLine(long, 80),
      `${'█'.repeat(12)}${'░'.repeat(12)}  50% 3.0 MiB/6.0 MiB redacting agent.log.12.gz and mo…`,
    );
    assert.equal(
      renderLine(long, 60),
      `${'█'.repeat(7)}${'░'.repeat(6)}  50% 3.0 MiB/6.0 MiB redacting agent.log.12.…`,
    );
    assert.equal(renderLine(long, 40), ' 50% 3.0 MiB/6.0 MiB redacting agent.l…');
    assert.equal(renderLine(long, 30), ' 50% 3.0 MiB/6.0 MiB redacti…');
  });

  it('a terminal narrower than the figures gets what fits of them', () => {
    assert.equal(renderLine(state, 10), ' 50% 3.0 ');
  });

  it('only the label while no byte count is known', () => {
    assert.equal(
      renderLine({ done: 0, total: 0, label: '[2/4] requesting an upload URL' }, 80),
      '[2/4] requesting an upload URL',
    );
    assert.equal(renderLine({ done: 0, total: 0, label: 'x'.repeat(100) }, 20), `${'x'.repeat(18)}…`);
  });

  it('a count past the total shows 100 %, never more', () => {
    assert.match(renderLine({ done: 10, total: 5, label: '' }, 80), /^█{24} 100% 5 B\/5 B$/);
  });
});

describe('createProgress on a terminal', () => {
  it('each draw ends with a newline: the cursor always rests on a fresh line', () => {
    const s = tty();
    const p = createProgress(s, steppingClock());
    p.grow(2048);
    p.phase('redacting agent.log');
    assert.ok(s.out.endsWith('\n'));
    for (let i = 0; i < 4; i++) {
      p.advance(512);
      assert.ok(s.out.endsWith('\n'), JSON.stringify(s.out));
    }
    // Every redraw replaced the line before it: one line on screen, the last state.
    assert.deepEqual(s.screen(), ['████████████████████████ 100% 2.0 KiB/2.0 KiB redacting agent.log']);
    assert.equal(s.out.split(UP_AND_ERASE).length, 5, 'four redraws, each over the previous line');
  });

  it('done() erases the line and leaves the cursor where it started', () => {
    const s = tty();
    s.write('$ guard-agent support-bundle upload b.tar.zst\n');
    const p = createProgress(s, steppingClock());
    p.grow(100);
    p.phase('[1/4] checking the bundle');
    p.advance(50);
    p.done();
    assert.ok(s.out.endsWith(UP_AND_ERASE));
    assert.deepEqual(s.screen(), ['$ guard-agent support-bundle upload b.tar.zst']);
    p.advance(50); // after done: nothing more is drawn
    p.phase('late');
    assert.ok(s.out.endsWith(UP_AND_ERASE));
  });

  it('advance draws at most every REDRAW_MS; a new phase draws at once', () => {
    const s = tty();
    let t = 0;
    const p = createProgress(s, () => t);
    p.grow(1000);
    p.phase('a');
    const draws = () => s.out.split('\n').length - 1;
    assert.equal(draws(), 1);
    t += REDRAW_MS / 2;
    p.advance(1);
    assert.equal(draws(), 1);
    p.phase('b');
    assert.equal(draws(), 2);
    t += REDRAW_MS;
    p.advance(1);
    assert.equal(draws(), 3);
  });

  it('print() puts a notice above the bar and draws the bar again below it', () => {
    const s = tty();
    const p = createProgress(s, steppingClock());
    p.grow(100);
    p.phase('[2/4] requesting an upload URL');
    p.print('guard-agent: presign: HTTP 503; retrying in 0.7 s (attempt 2 of 4)');
    assert.deepEqual(s.screen(), [
      'guard-agent: presign: HTTP 503; retrying in 0.7 s (attempt 2 of 4)',
      '░░░░░░░░░░░░░░░░░░░░░░░░   0% 0 B/100 B [2/4] requesting an upload URL',
    ]);
    p.done();
    assert.deepEqual(s.screen(), ['guard-agent: presign: HTTP 503; retrying in 0.7 s (attempt 2 of 4)']);
  });

  it('fits the width the terminal has at each draw, and redraws on resize', () => {
    const s = tty(100);
    const p = createProgress(s, steppingClock());
    p.grow(1024);
    p.phase(`archiving ${'a-long-segment-name.'.repeat(5)}gz`);
    assert.ok((s.screen()[0] ?? '').length > 60);
    s.resize(120); // wider: the line is still one row, redrawn in place
    assert.equal(s.screen().length, 1);
    s.resize(40); // narrower than the line: it may have wrapped; a fresh line is drawn below it
    const screen = s.screen();
    assert.equal(screen.length, 2);
    const last = screen[1] ?? '';
    assert.ok(last.length <= 39, last);
    assert.match(last, /^ {2}0% 0 B\/1\.0 KiB archiving a-long-segm…$/);
    p.advance(512); // from now on redrawn in place again
    assert.equal(s.screen().length, 2);
    p.done();
    assert.equal(s.screen().length, 1, 'the stale wide line is left alone');
  });

  it('grow() may take work back, never below nothing', () => {
    const s = tty();
    const p = createProgress(s, steppingClock());
    p.grow(100);
    p.grow(-300);
    p.phase('x');
    assert.deepEqual(s.screen(), ['x']);
  });

  it('stops listening for resizes once done', () => {
    const s = tty();
    const p = createProgress(s);
    assert.equal(s.listenerCount('resize'), 1);
    p.done();
    assert.equal(s.listenerCount('resize'), 0);
  });
});

describe('createProgress off a terminal', () => {
  it('draws nothing, but print() still writes its line', () => {
    const s = new Terminal(false) as Terminal & NodeJS.WriteStream;
    const p = createProgress(s);
    p.grow(10);
    p.phase('x');
    p.advance(5);
    p.print('guard-agent: presign: HTTP 503; retrying in 1.0 s (attempt 2 of 4)');
    p.done();
    assert.equal(s.out, 'guard-agent: presign: HTTP 503; retrying in 1.0 s (attempt 2 of 4)\n');
  });

  it('SILENT_PROGRESS writes nothing at all', () => {
    SILENT_PROGRESS.print('x');
    SILENT_PROGRESS.done();
  });
});

it('formats sizes in binary units', () => {
  assert.equal(formatBytes(999), '999 B');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(180 * 1024 * 1024), '180 MiB');
});
