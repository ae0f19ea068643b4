// The progress display in a real terminal: tmux runs a shell in a pseudo-terminal of a known
// width, the test types the real bin/guard-agent commands into it (against a stand-in
// service on loopback for upload), presses Ctrl-C or signals the agent, and reads the screen
// back with capture-pane. Asserted (progress.ts): the line fits the terminal's width with its
// figures whole, redraws replace it in place, and an interrupt (no signal handlers, spec
// 1.7) leaves the prompt and later output on lines of their own.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { BIN, childEnv, collectArgs, gzipText, type Home, makeHome, TempDirs, writeBigLog } from './harness.ts';
import {
  fakeEnrollment,
  NO_PROXY_ENV,
  type StandIn,
  startStandIn,
  uploadArgs,
  waitFor,
  writeEnrollmentFile,
  writeRandomLog,
} from './upload-harness.ts';

const execFileP = promisify(execFile);

const PROMPT = 'PROMPT$ ';
/** A progress line on screen: `[bar] <pct>% <done>/<total> <label>`, the figures whole. */
const PROGRESS = /(?:^|[█░ ])\s*\d{1,3}% \d+(?:\.\d)? (?:B|KiB|MiB|GiB)\/\d+(?:\.\d)? (?:B|KiB|MiB|GiB)(?: |$)/;

/** A tmux server of its own (its socket in a temp dir) running `sh` in one window. */
class Terminal {
  private readonly socket: string;
  constructor(socket: string) {
    this.socket = socket;
  }

  async tmux(...args: string[]): Promise<string> {
    const { stdout } = await execFileP('tmux', ['-S', this.socket, ...args], {
      env: childEnv({ ...NO_PROXY_ENV, PS1: PROMPT }),
    });
    return stdout;
  }

  static async start(socket: string, columns: number): Promise<Terminal> {
    const t = new Terminal(socket);
    // PS1 on the command: the shell does not take it from tmux's environment.
    const shell = `env PS1='${PROMPT}' sh`;
    await t.tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'progress', '-x', String(columns), '-y', '30', shell);
    try {
      await t.tmux('set-option', '-g', 'status', 'off');
      await t.until((s) => s.includes(PROMPT.trim()), 'the shell prompt', 20_000);
    } catch (error) {
      await t.close(); // no tmux server outlives the test
      throw error;
    }
    return t;
  }

  /** Types a command line and presses Enter. */
  async run(line: string): Promise<void> {
    await this.tmux('send-keys', '-t', 'progress', '-l', line);
    await this.tmux('send-keys', '-t', 'progress', 'Enter');
  }

  async keys(...keys: string[]): Promise<void> {
    await this.tmux('send-keys', '-t', 'progress', ...keys);
  }

  /** Appends everything the shell and its commands write to the terminal (raw bytes) to `file`. */
  async record(file: string): Promise<void> {
    await this.tmux('pipe-pane', '-o', '-t', 'progress', `cat >> '${file}'`);
  }

  async resize(columns: number): Promise<void> {
    await this.tmux('resize-window', '-t', 'progress', '-x', String(columns));
  }

  /** The screen's rows as shown (wrapped rows apart), trailing blanks trimmed. */
  async rows(): Promise<string[]> {
    const text = await this.tmux('capture-pane', '-p', '-t', 'progress');
    return text.split('\n').map((r) => r.trimEnd());
  }

  async until(cond: (screen: string, rows: string[]) => boolean, what: string, timeoutMs = 60_000): Promise<string[]> {
    let rows: string[] = [];
    await waitFor(
      async () => {
        rows = await this.rows();
        return cond(rows.join('\n'), rows);
      },
      what,
      timeoutMs,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the screen:\n${rows.join('\n')}`);
    });
    return rows;
  }

  async close(): Promise<void> {
    await this.tmux('kill-server').catch(() => {});
  }
}

/** Rows that hold a progress line. */
function progressRows(rows: string[]): string[] {
  return rows.filter((r) => PROGRESS.test(r));
}

/** One drawn state of the progress line, as recorded. */
interface Frame {
  pct: number;
  label: string;
}

/**
 * The progress lines drawn, in order, from the raw terminal output: the line is drawn, then
 * taken back with "cursor up, erase line" before the next one.
 */
function frames(raw: string): Frame[] {
  const out: Frame[] = [];
  // biome-ignore lint/suspicious/noControlCharactersInRegex: splitting on the escapes is the point
  for (const line of raw.split(/\x1b\[1A|\x1b\[2K|\r|\n/)) {
    const m = /^[█░]* *(\d{1,3})% \S+ \S+\/\S+ \S+ ?(.*)$/.exec(line);
    if (m) out.push({ pct: Number(m[1]), label: m[2] ?? '' });
  }
  return out;
}

/** Asserts that the percentage never goes down by more than `slack` points from one frame to the next. */
function assertRising(list: Frame[], slack: number): void {
  for (let i = 1; i < list.length; i++)
    assert.ok(
      (list[i]?.pct ?? 0) >= (list[i - 1]?.pct ?? 0) - slack,
      `the percentage went down at frame ${i}:\n${list.map((f) => `${f.pct}% ${f.label}`).join('\n')}`,
    );
}

/** A shell command line: the agent with `args`, each quoted. */
function agentCommand(args: string[]): string {
  return [BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
}

const dirs = new TempDirs();
let root: string;
let collectHome: Home;
let uploadHome: Home;
let bundle: string;
let standIn: StandIn;
let outCount = 0;

before(async () => {
  root = await dirs.make('progress-tty');
  // A log collect needs a few seconds for: the progress is on screen long enough to be seen.
  collectHome = await makeHome(join(root, 'collect'), {
    // Rotated segments too: collect scans, then archives them after the current log.
    logDirFiles: {
      'agent.log.1.gz': gzipText(`${'level=INFO msg=rotated host=web-01\n'.repeat(200_000)}`),
      'agent.log.2.gz': gzipText(`${'level=INFO msg=older api_key=SECRET_IN_SEGMENT\n'.repeat(100_000)}`),
    },
  });
  await writeBigLog(collectHome.logPath, 150);
  uploadHome = await makeHome(join(root, 'upload'), { log: '' });
  await writeRandomLog(uploadHome.logPath, 4 * 1024 * 1024);
  bundle = join(uploadHome.root, 'bundle.tar.zst');
  await execFileP(BIN, collectArgs(uploadHome, bundle), { env: childEnv(NO_PROXY_ENV) });
  // A service that never answers the PUT: the upload stays at step 3 until it is interrupted.
  standIn = await startStandIn({ script: { put: ['stall'] } });
  await writeEnrollmentFile(uploadHome, fakeEnrollment(standIn.url));
});
after(async () => {
  await standIn?.close();
  await dirs.cleanup();
});

describe('progress in a terminal (tmux)', () => {
  let term: Terminal;
  let n = 0;
  const open = async (columns: number) => {
    term = await Terminal.start(join(root, `tmux-${++n}.sock`), columns);
  };
  const close = async () => {
    await term?.close();
  };

  it('collect to the end: every phase is drawn, the percentage only rises and reaches the end; the output stands alone', async () => {
    await open(80);
    try {
      const raw = join(root, 'collect.raw');
      await term.record(raw);
      const out = join(root, `out-${++outCount}.tar.zst`);
      await term.run(`${agentCommand(collectArgs(collectHome, out))}; echo "status=$?"`);
      const rows = await term.until((s) => /^status=\d+$/m.test(s), 'the end of collect');
      assert.ok(rows.includes('status=0'), rows.join('\n'));
      // stdout's path and stderr's summary each start a line; no progress line is left.
      assert.ok(rows.includes(out), rows.join('\n'));
      assert.ok(rows.some((r) => /^sha256=[0-9a-f]{64}$/.test(r)) && rows.some((r) => /^size=\d+$/.test(r)));
      assert.deepEqual(progressRows(rows), [], rows.join('\n'));

      const drawn = frames(await readFile(raw, 'utf8'));
      const labels = [...new Set(drawn.map((f) => f.label))];
      for (const want of [
        'redacting agent.log',
        'archiving agent.log',
        'scanning agent.log.1.gz',
        'archiving agent.log.1.gz',
        'archiving agent.log.2.gz',
      ])
        assert.ok(labels.includes(want), `no frame says "${want}": ${labels.join(' | ')}`);
      assert.ok(drawn.indexOf(drawn.find((f) => f.label === 'archiving agent.log') as Frame) > 0);
      // The total is known before the first byte is counted: no frame goes back (a redacted
      // copy a little larger than its source may take back a point).
      assertRising(drawn, 1);
      assert.ok((drawn[0]?.pct ?? 100) <= 5, `starts at ${drawn[0]?.pct} %`);
      assert.ok((drawn[drawn.length - 1]?.pct ?? 0) >= 95, `ends at ${drawn[drawn.length - 1]?.pct} %`);
      // The archive steps move the bar too: it is redrawn while agent.log is archived.
      const archiving = drawn.filter((f) => f.label === 'archiving agent.log').map((f) => f.pct);
      assert.ok(new Set(archiving).size >= 2, `agent.log's archiving showed no progress: ${archiving.join(', ')}`);
    } finally {
      await close();
    }
  });

  it('upload to the end: steps 1 to 4 in order, the percentage only rises, 100 % once the PUT is done', async () => {
    const service = await startStandIn();
    const home = await makeHome(join(root, 'upload-ok'), { log: '' });
    await writeEnrollmentFile(home, fakeEnrollment(service.url));
    await open(80);
    try {
      const raw = join(root, 'upload.raw');
      await term.record(raw);
      await term.run(`${agentCommand(uploadArgs(home, bundle))}; echo "status=$?"`);
      const rows = await term.until((s) => /^status=\d+$/m.test(s), 'the end of the upload');
      assert.ok(rows.includes('status=0'), rows.join('\n'));
      assert.ok(
        rows.some((r) => /^bundle_id=\S+$/.test(r)),
        rows.join('\n'),
      );
      assert.deepEqual(progressRows(rows), [], rows.join('\n'));

      const drawn = frames(await readFile(raw, 'utf8'));
      const steps = drawn.map((f) => f.label).filter((l, i, all) => l !== all[i - 1]);
      assert.deepEqual(steps, [
        '[1/4] checking the bundle',
        '[2/4] requesting an upload URL',
        '[3/4] uploading',
        '[4/4] registering the upload',
      ]);
      assertRising(drawn, 0);
      assert.equal(drawn.find((f) => f.label.startsWith('[2/4]'))?.pct, 50, 'the check is half of the bytes');
      assert.equal(drawn[drawn.length - 1]?.pct, 100);
    } finally {
      await close();
      await service.close();
    }
  });

  it('collect, Ctrl-C mid-run: the prompt comes back on a line of its own; exit status 130', async () => {
    await open(80);
    try {
      const out = join(root, `out-${++outCount}.tar.zst`);
      await term.run(agentCommand(collectArgs(collectHome, out)));
      const during = await term.until((_, rows) => progressRows(rows).length > 0, 'a progress line');
      assert.equal(progressRows(during).length, 1, `redraws stack up:\n${during.join('\n')}`);
      await term.keys('C-c');
      const rows = await term.until(
        (_, r) => r.filter((row) => row.includes(PROMPT.trim())).length >= 2,
        'the prompt after the interrupt',
      );
      const bar = rows.findIndex((r) => PROGRESS.test(r));
      assert.ok(bar >= 0, rows.join('\n'));
      assert.doesNotMatch(
        rows[bar] ?? '',
        /\^C|PROMPT/,
        `the interrupt was echoed on the progress line:\n${rows.join('\n')}`,
      );
      assert.ok(
        rows.slice(bar + 1).some((r) => r.startsWith(PROMPT.trim())),
        `the prompt does not start a line:\n${rows.join('\n')}`,
      );
      await term.run('echo "status=$?"');
      await term.until((s) => /^status=130$/m.test(s), 'status=130');
    } finally {
      await close();
    }
  });

  it('upload, Ctrl-C while the PUT stalls: the progress names step 3, the prompt comes back on its own line', async () => {
    await open(80);
    try {
      await term.run(agentCommand(uploadArgs(uploadHome, bundle)));
      const during = await term.until(
        (_, rows) => progressRows(rows).some((r) => r.includes('uploading')),
        'the upload step on the progress line',
      );
      assert.equal(progressRows(during).length, 1, `redraws stack up:\n${during.join('\n')}`);
      assert.match(progressRows(during)[0] ?? '', / \[3\/4\] uploading$/);
      await term.keys('C-c');
      const rows = await term.until(
        (_, r) => r.filter((row) => row.includes(PROMPT.trim())).length >= 2,
        'the prompt after the interrupt',
      );
      const bar = rows.findIndex((r) => PROGRESS.test(r));
      assert.doesNotMatch(rows[bar] ?? '', /\^C|PROMPT/, rows.join('\n'));
      assert.ok(
        rows.slice(bar + 1).some((r) => r.startsWith(PROMPT.trim())),
        rows.join('\n'),
      );
    } finally {
      await close();
    }
  });

  for (const [signal, status] of [
    ['INT', 130],
    ['TERM', 143],
  ] as const) {
    it(`upload ended by SIG${signal} from a script: the script's next output starts its own line`, async () => {
      await open(80);
      try {
        const pidFile = join(root, `agent-${signal}.pid`);
        await rm(pidFile, { force: true });
        await term.run(
          `${agentCommand(uploadArgs(uploadHome, bundle))} & echo $! > '${pidFile}'; wait $!; echo "NEXT status=$?"`,
        );
        await term.until((_, rows) => rows.some((r) => r.includes('uploading')), 'the upload step');
        const pid = Number((await readFile(pidFile, 'utf8')).trim());
        process.kill(pid, `SIG${signal}`);
        // The typed command line holds `NEXT status=$?`; only the script's output has digits.
        const rows = await term.until((s) => /NEXT status=\d+/.test(s), 'the next output');
        assert.ok(
          rows.some((r) => r === `NEXT status=${status}`),
          `the next output does not stand on its own line:\n${rows.join('\n')}`,
        );
      } finally {
        await close();
      }
    });
  }

  it('a 40-column terminal: the line fits with its figures whole; it follows resizes, cutting the label', async () => {
    await open(40);
    try {
      await term.run(agentCommand(uploadArgs(uploadHome, bundle)));
      let rows = await term.until((_, r) => r.some((row) => row.includes('[3/4]')), 'step 3 at 40 columns');
      let lines = progressRows(rows);
      assert.equal(lines.length, 1, rows.join('\n'));
      const [narrow] = lines as [string];
      assert.ok(narrow.length <= 39, `${narrow.length} columns: ${narrow}`);
      assert.match(narrow, /^ *\d+% [\d.]+ MiB\/[\d.]+ MiB \[3\/4\] u/, narrow);
      // The row below the progress line is not the rest of it (no wrap).
      const at = rows.indexOf(narrow);
      assert.doesNotMatch(rows[at + 1] ?? '', /\S/, rows.join('\n'));

      await term.resize(100);
      rows = await term.until(
        (_, r) => progressRows(r).some((row) => row.includes('[3/4] uploading') && row.includes('█')),
        'the line redrawn for 100 columns',
      );
      lines = progressRows(rows);
      const wide = lines[lines.length - 1] ?? '';
      assert.ok(wide.length <= 99, wide);
      assert.match(wide, /^[█░]+ +\d+% [\d.]+ MiB\/[\d.]+ MiB \[3\/4\] uploading$/, wide);

      await term.resize(30);
      rows = await term.until((_, r) => {
        const l = progressRows(r);
        return l.length > 0 && (l[l.length - 1] ?? '').length <= 29 && !(l[l.length - 1] ?? '').includes('█');
      }, 'the line redrawn for 30 columns');
      lines = progressRows(rows);
      assert.match(lines[lines.length - 1] ?? '', /^ *\d+% [\d.]+ MiB\/[\d.]+ MiB \[3\/4\] ?\S*…$/);
      await term.keys('C-c');
    } finally {
      await close();
    }
  });
});
