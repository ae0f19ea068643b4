// `auth_log: journal` (DESIGN §3): the detector follows the systemd journal through the real
// journalctl. These machines run no journald, so the journal is a real journal file written by
// systemd-journal-remote (from Debian's package of that name) and journalctl reads it with
// --file: the same reader and format as on a host, entries appended while it follows. The
// signals go to the spool's sender, which here collects them (the way to the service is the
// daemon's end-to-end test, detect.test.ts).

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Detection, type SignalBody } from '../src/detect/index.ts';

const REMOTE = '/lib/systemd/systemd-journal-remote';
const missing = !existsSync(REMOTE)
  ? `${REMOTE} is not installed (Debian package systemd-journal-remote; scripts/install-test-deps.sh installs it)`
  : spawnSync('journalctl', ['--version']).status !== 0
    ? 'journalctl is not installed'
    : false;

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Appends one entry to the journal file, as journald would have written it. */
function journal(file: string, program: string, message: string, atMs = Date.now()): void {
  const entry = [
    `__REALTIME_TIMESTAMP=${atMs * 1000}`,
    '__MONOTONIC_TIMESTAMP=1000',
    '_BOOT_ID=0123456789abcdef0123456789abcdef',
    `SYSLOG_IDENTIFIER=${program}`,
    `MESSAGE=${message}`,
    '',
    '',
  ].join('\n');
  execFileSync(REMOTE, ['-o', file, '-'], { input: entry, stdio: ['pipe', 'ignore', 'ignore'] });
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 15_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function startDetection(stateDir: string, file: string) {
  const stop = new AbortController();
  const sent: SignalBody[] = [];
  const keys: string[] = [];
  const logs: string[] = [];
  const log = (level: string) => (msg: string, attrs?: Record<string, unknown>) =>
    void logs.push(`${level} ${msg} ${JSON.stringify(attrs ?? {})}`);
  const detection = new Detection({
    stateDir,
    config: { authLog: 'journal', watch: [], exec: false, floodPerMinute: 100 },
    log: { info: log('INFO'), warn: log('WARN'), error: log('ERROR') },
    now: () => new Date(),
    send: async (body, key) => {
      sent.push(body);
      keys.push(key);
      return { ok: true };
    },
    retryDelay: () => 100,
    signal: stop.signal,
    journalArgs: [`--file=${file}`],
  });
  return {
    detection,
    sent,
    keys,
    logs,
    async stop() {
      stop.abort();
      await detection.stopped();
    },
  };
}

describe('auth_log: journal — the systemd journal through journalctl', { skip: missing }, () => {
  it('raises signals from new entries only, and resumes after the last entry read', async () => {
    const dir = await mkdtemp(join(os.tmpdir(), 'guard-journal-'));
    dirs.push(dir);
    const file = join(dir, 'system.journal');
    journal(file, 'sudo', 'old : TTY=pts/0 ; PWD=/ ; USER=root ; COMMAND=/bin/old', Date.now() - 5000);
    const d1 = startDetection(join(dir, 'state'), file);
    await d1.detection.start();
    assert.equal(d1.detection.status().find((s) => s.name === 'auth_log')?.state, 'running', d1.logs.join('\n'));
    journal(file, 'sudo', 'alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/su -');
    journal(file, 'CRON', 'pam_unix(cron:session): session opened for user root');
    journal(file, 'sshd', 'Accepted publickey for bob from 198.51.100.7 port 5022 ssh2');
    await until(() => d1.sent.length === 2, 'two signals');
    await d1.stop();
    assert.deepEqual(
      d1.sent.map((s) => [s.signal_type, s.severity, s.identity_name]),
      [
        ['sudo_command_executed', 4, 'alice'],
        ['ssh_login_succeeded', 1, 'bob'],
      ],
    );
    // Written while stopped: read at the next start (--after-cursor), nothing before it again.
    journal(file, 'useradd', 'new user: name=eve, UID=1001, GID=1001, home=/home/eve, shell=/bin/sh');
    const d2 = startDetection(join(dir, 'state'), file);
    await d2.detection.start();
    // A last entry after it: once that one is in, everything before it was read (in order).
    journal(file, 'sudo', 'carol : TTY=pts/1 ; PWD=/ ; USER=root ; COMMAND=/usr/bin/id');
    await until(() => d2.sent.length >= 2, 'the entries after the restart');
    await d2.stop();
    assert.deepEqual(
      d2.sent.map((s) => `${s.signal_type} ${s.identity_name}`),
      ['user_created eve', 'sudo_command_executed carol'],
    );
    assert.equal(new Set([...d1.keys, ...d2.keys]).size, 4, 'each signal its own idempotency key');
  });
});
