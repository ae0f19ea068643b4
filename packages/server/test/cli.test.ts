// The real bin/guard-server as a new user meets it: --version, --help of each command, what a
// mistyped flag or a taken port prints, and the exit codes documented in docs/guard-server.md
// (0 success, 1 runtime failure, 2 usage or configuration error, 3 cannot listen).

import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SETTINGS } from '../src/config.ts';
import { EXIT_CODES } from '../src/kernel/exit-codes.ts';
import { makeTempDir, SERVER_BIN, SERVER_DIR, waitFor } from './harness.ts';
import { UNPRIVILEGED } from './unprivileged.ts';

const VERSION: string = JSON.parse(await readFile(join(SERVER_DIR, 'package.json'), 'utf8')).version;
const DOCS = join(SERVER_DIR, '..', '..', 'docs', 'guard-server.md');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs bin/guard-server to its end (30 s at most: a server that starts instead is a failure). */
function run(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; unprivileged?: boolean } = {},
): Promise<Run> {
  const [file, ...argv] = [...(options.unprivileged ? UNPRIVILEGED : []), SERVER_BIN, ...args];
  return new Promise((resolve) => {
    execFile(
      file,
      argv,
      { cwd: options.cwd, env: { ...process.env, ...options.env }, timeout: 30_000, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        const code = error ? ((error as { code?: unknown }).code as number | null) : 0;
        resolve({ code: typeof code === 'number' ? code : null, stdout, stderr });
      },
    );
  });
}

/** No Node stack trace, no parseArgs wording, no internal error code. */
function assertNoRawText(text: string): void {
  assert.doesNotMatch(text, /^\s+at /m, 'a stack trace was printed');
  assert.doesNotMatch(text, /ERR_[A-Z_]+|To specify a positional argument|Unknown option '/);
}

/** The rows of the markdown table that follows `heading` in docs/guard-server.md. */
async function docTable(heading: string): Promise<string[][]> {
  const text = await readFile(DOCS, 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `docs/guard-server.md has no "${heading}" section`);
  const lines = text.slice(start + heading.length + 2).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** Starts bin/guard-server serving and resolves once it says it is listening. */
async function serving(args: string[]): Promise<ChildProcess> {
  const child = spawn(SERVER_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d;
  });
  await waitFor(() => stderr.includes('is listening on') || child.exitCode !== null, 'the server to listen', 20_000);
  assert.ok(stderr.includes('is listening on'), stderr);
  return child;
}

describe('guard-server command line', () => {
  let cwd: string;
  before(async () => {
    cwd = await makeTempDir('cli');
  });
  after(() => rm(cwd, { recursive: true, force: true }));

  it('--version prints "guard-server <version>" and exits 0', async () => {
    for (const flag of ['--version', '-V']) {
      const r = await run([flag], { cwd });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `guard-server ${VERSION}\n`);
      assert.equal(r.stderr, '');
    }
  });

  it('an unknown flag gets our own message, the hint to run --help, and exit 2', async () => {
    const r = await run(['--datadir', './x'], { cwd });
    assert.equal(r.code, EXIT_CODES.usage.code);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^guard-server: unknown option --datadir\n/);
    assert.match(r.stderr, /guard-server --help/);
    assertNoRawText(r.stderr);
    const setup = await run(['setup', '--bogus'], { cwd });
    assert.equal(setup.code, 2);
    assert.match(setup.stderr, /^guard-server: unknown option --bogus\n/);
    assert.match(setup.stderr, /guard-server setup --help/);
    assertNoRawText(setup.stderr);
  });

  it('a flag without its value, a switch given a value, a stray argument or an unknown command exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['--listen'], /^guard-server: --listen needs a value\n/],
      [['--listen', '--data-dir', 'x'], /^guard-server: --listen needs a value/],
      [['--webhook-allow-private=yes'], /^guard-server: --webhook-allow-private takes no value/],
      [['setup', 'extra'], /^guard-server: unexpected argument "extra"/],
      [
        ['start'],
        /^guard-server: unknown command "start" \(commands: serve, setup, migrate, export, import, reset-mfa\)/,
      ],
      [['serve', '--json'], /^guard-server: --json applies to setup only/],
    ];
    for (const [args, message] of cases) {
      const r = await run(args, { cwd });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
      assert.match(r.stderr, /--help/);
      assertNoRawText(r.stderr);
    }
  });

  it('an invalid setting is a configuration error: exit 2, the setting named, nothing created', async () => {
    const r = await run(['--listen', 'nowhere', '--data-dir', 'never'], { cwd });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^guard-server: listen must be HOST:PORT, got nowhere\n/);
    assertNoRawText(r.stderr);
    const file = join(cwd, 'bad.yaml');
    await writeFile(file, '- a list\n');
    const c = await run(['setup', '--json', '--config', file, '--data-dir', 'never'], { cwd });
    assert.equal(c.code, 2);
    assert.match(c.stderr, /^guard-server: config file .*bad\.yaml: must be a YAML mapping\n/);
    await assert.rejects(stat(join(cwd, 'never')));
  });

  it('a port already in use prints one clear line and exits 3', async () => {
    const blocker = net.createServer();
    blocker.listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const dataDir = join(cwd, 'in-use');
      const r = await run(['--listen', `127.0.0.1:${port}`, '--data-dir', dataDir], { cwd });
      assert.equal(r.code, EXIT_CODES.listen.code);
      assert.equal(r.code, 3);
      assert.equal(
        r.stderr,
        `guard-server: cannot listen on 127.0.0.1:${port}: the address is already in use (is another guard-server running?)\n`,
      );
    } finally {
      blocker.close();
    }
  });

  it('a second server on a data dir being served exits 1 and leaves its uploads in progress alone', async () => {
    const dataDir = join(cwd, 'served');
    const args = ['--listen', '127.0.0.1:0', '--data-dir', dataDir, '--metrics-listen', ''];
    const first = await serving(args);
    try {
      const partial = join(dataDir, 'objects', '.partial', 'upload-in-progress');
      await writeFile(partial, 'half a bundle');
      const r = await run(args, { cwd });
      assert.equal(r.code, EXIT_CODES.failure.code, r.stderr);
      assert.match(r.stderr, new RegExp(`in use by another guard-server \\(pid ${first.pid}\\)`));
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
      assert.equal(await readFile(partial, 'utf8'), 'half a bundle');
    } finally {
      first.kill('SIGKILL');
      await once(first, 'exit');
    }
    // The lock a killed server left behind names a process that is gone: the next one starts.
    const next = await serving(args);
    next.kill('SIGTERM');
    assert.equal((await once(next, 'exit'))[0], 0);
  });

  it('a port the user may not bind exits 3 with "permission denied"', async () => {
    const dataDir = join(cwd, 'unprivileged');
    await mkdir(dataDir);
    const r = await run(['--listen', '127.0.0.1:1', '--data-dir', dataDir], { cwd: dataDir, unprivileged: true });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /^guard-server: cannot listen on 127\.0\.0\.1:1: permission denied \(ports below 1024 /);
    assertNoRawText(r.stderr);
  });

  it('a data dir that cannot be used is a runtime failure: one line, exit 1', async () => {
    const notADir = join(cwd, 'a-file');
    await writeFile(notADir, 'x');
    for (const args of [
      ['--listen', '127.0.0.1:0', '--data-dir', notADir],
      ['setup', '--json', '--data-dir', notADir],
    ]) {
      const r = await run(args, { cwd });
      assert.equal(r.code, EXIT_CODES.failure.code, r.stderr);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^guard-server: (cannot start|setup failed): .*a-file/);
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
      assertNoRawText(r.stderr);
    }
  });

  it("setup --help is setup's own help and touches nothing", async () => {
    const r = await run(['setup', '--help'], { cwd });
    assert.equal(r.code, 0);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^Usage: guard-server setup /m);
    assert.match(r.stdout, /--json/);
    assert.match(r.stdout, /--data-dir/);
    assert.doesNotMatch(r.stdout, /--webhook-retry-schedule/, 'serve options in setup help');
    await assert.rejects(stat(join(cwd, 'data')), 'setup --help created a data dir');
    const global = await run(['--help'], { cwd });
    assert.notEqual(r.stdout, global.stdout);
  });

  it("serve --help is serve's own help and lists every setting", async () => {
    const r = await run(['serve', '--help'], { cwd });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: guard-server \[serve\] \[options\]/m);
    assert.doesNotMatch(r.stdout, /--json/);
    for (const s of SETTINGS) assert.ok(r.stdout.includes(`--${s.flag} `), `--${s.flag} missing from serve --help`);
    const h = await run(['-h'], { cwd });
    assert.equal(h.code, 0);
    assert.match(h.stdout, /guard-server setup/);
  });

  it('help columns line up, also for the longest flag', async () => {
    /** Where each column of a table row starts: after the indent and after each run of 2+ spaces. */
    const columnStarts = (line: string) => [...line.matchAll(/ {2,}(?=\S)/g)].map((m) => m.index + m[0].length);
    for (const args of [['--help'], ['serve', '--help'], ['setup', '--help']]) {
      const { stdout } = await run(args, { cwd });
      // Tables are runs of consecutive lines indented by two spaces.
      const tables: string[][] = [];
      let current: string[] = [];
      for (const line of [...stdout.split('\n'), '']) {
        if (/^ {2}\S/.test(line)) current.push(line);
        else if (current.length > 0) {
          tables.push(current);
          current = [];
        }
      }
      assert.ok(tables.length >= (args[0] === 'setup' ? 1 : 2), `${args.join(' ')}: ${tables.length} tables`);
      for (const rows of tables) {
        const first = columnStarts(rows[0]);
        assert.ok(first.length >= 2, `a row without columns: ${rows[0]}`);
        for (const row of rows)
          assert.deepEqual(columnStarts(row), first, `${args.join(' ')}: misaligned\n${rows.join('\n')}`);
      }
      const longest = SETTINGS.reduce((a, s) => (s.flag.length > a.length ? s.flag : a), '');
      if (args[0] !== 'setup') assert.match(stdout, new RegExp(`^ {2}--${longest} {2,}GUARD_SERVER_`, 'm'));
    }
  });

  it('docs/guard-server.md documents the exit codes exactly as the code defines them', async () => {
    const rows = await docTable('## Exit codes');
    assert.deepEqual(
      rows.map((r) => [Number(r[0]), r[1]]),
      Object.values(EXIT_CODES).map((e) => [e.code, e.summary]),
    );
    assert.deepEqual(
      Object.values(EXIT_CODES).map((e) => e.code),
      [0, 1, 2, 3],
    );
  });

  it('docs/guard-server.md lists exactly the settings of config.ts, with their names and defaults', async () => {
    const rows = await docTable('## Configuration');
    const unquote = (cell: string) => /^`([^`]*)`/.exec(cell)?.[1];
    const documented = rows
      .filter((r) => r[0] !== '`--config`')
      .map((r) => ({ flag: unquote(r[0]), env: unquote(r[1]), file: unquote(r[2]), default: unquote(r[3]) }));
    const expected = SETTINGS.map((s) => ({
      flag: `--${s.flag}`,
      env: s.env,
      file: s.file,
      default: s.default === '' ? documented.find((d) => d.flag === `--${s.flag}`)?.default : s.default,
    }));
    assert.deepEqual(documented, expected);
  });
});
