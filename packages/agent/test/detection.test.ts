// Detection in process; the spool's sender collects the signals (the way to the service is the
// daemon's end-to-end test, detect.test.ts).
//  - Floods (docs/detection.md): a burst of 100,000 matching lines in a real auth log makes at
//    most flood_per_minute signals of a type, and the rest of that minute one summary of the
//    type when the minute ends (the detection's clock is moved past it); one ssh_bruteforce for
//    the one address.
//  - Without eBPF: the exec detector reports why, the others run.

import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { Detection, type SignalBody } from '../src/detect/index.ts';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function until(cond: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('100,000 failed logins in a burst: 20 ssh_login_failed, one summary counting the rest, one ssh_bruteforce', async () => {
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-flood-'));
  dirs.push(dir);
  const authLog = join(dir, 'auth.log');
  await writeFile(authLog, '');
  // The minute starts now, on a clock the test moves.
  let clock = Math.floor(Date.now() / 60_000) * 60_000 + 1000;
  const sent: SignalBody[] = [];
  const stop = new AbortController();
  const detection = new Detection({
    stateDir: join(dir, 'state'),
    config: { authLog, watch: [], exec: false, floodPerMinute: 20 },
    log: { info: () => {}, warn: () => {}, error: () => {} },
    now: () => new Date(clock),
    send: async (body) => {
      sent.push(body);
      return { ok: true };
    },
    retryDelay: () => 100,
    signal: stop.signal,
  });
  try {
    await detection.start();
    const n = 100_000;
    const lines: string[] = [];
    for (let i = 0; i < n; i++)
      lines.push(
        `Nov 27 10:00:00 web-01 sshd[${1000 + (i % 5000)}]: Failed password for invalid user u${i} from 203.0.113.66 port ${1024 + (i % 60000)} ssh2`,
      );
    // A last line of another type: once its signal is out, every line before it was read.
    lines.push(
      'Nov 27 10:00:01 web-01 useradd[7]: new user: name=last, UID=1009, GID=1009, home=/home/last, shell=/bin/sh',
    );
    await appendFile(authLog, `${lines.join('\n')}\n`);
    const failed = () => sent.filter((s) => s.signal_type === 'ssh_login_failed');
    await until(() => sent.some((s) => s.signal_type === 'user_created'), 'every line read');
    assert.equal(failed().length, 20);
    clock += 60_000;
    await until(() => failed().length === 21, 'the summary when the minute ended', 30_000);
    const summary = failed()[20];
    assert.match(summary.description, new RegExp(`^flood limit: ${n - 20} more ssh_login_failed events in the minute`));
    assert.match(summary.description, /"u99999"/, 'the last event quoted');
    assert.equal(sent.filter((s) => s.signal_type === 'ssh_bruteforce').length, 1);
    assert.equal(sent.length, 23);
  } finally {
    stop.abort();
    await detection.stopped();
  }
});

it('without eBPF (here: no probe helper) the exec detector says why, and the others run', async () => {
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-noebpf-'));
  dirs.push(dir);
  const authLog = join(dir, 'auth.log');
  await writeFile(authLog, '');
  const warnings: string[] = [];
  const sent: SignalBody[] = [];
  const stop = new AbortController();
  const detection = new Detection({
    stateDir: join(dir, 'state'),
    config: { authLog, watch: [join(dir, 'watched')], exec: true, floodPerMinute: 20 },
    log: { info: () => {}, warn: (m, a) => void warnings.push(`${m} ${JSON.stringify(a)}`), error: () => {} },
    now: () => new Date(),
    send: async (body) => {
      sent.push(body);
      return { ok: true };
    },
    retryDelay: () => 100,
    signal: stop.signal,
    execHelperPath: join(dir, 'no-such-guard-exec-probe'),
  });
  try {
    await detection.start();
    const status = Object.fromEntries(detection.status().map((s) => [s.name, s]));
    assert.equal(status.exec.state, 'failed');
    assert.match(status.exec.reason ?? '', /no-such-guard-exec-probe/);
    assert.ok(
      warnings.some((w) => w.includes('detector exec is not running')),
      warnings.join('\n'),
    );
    assert.equal(status.auth_log.state, 'running');
    assert.equal(status.file_integrity.state, 'running');
    await appendFile(authLog, 'Nov 27 10:00:00 web-01 sudo: alice : TTY=pts/0 ; PWD=/ ; USER=root ; COMMAND=/bin/id\n');
    await writeFile(join(dir, 'watched'), 'now it exists\n');
    await until(() => sent.length === 2, 'the other detectors to raise signals');
    assert.deepEqual(sent.map((s) => s.signal_type).sort(), ['critical_file_modified', 'sudo_command_executed']);
  } finally {
    stop.abort();
    await detection.stopped();
  }
});
