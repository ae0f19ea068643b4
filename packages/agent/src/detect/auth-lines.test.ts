import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAuthLine, parseAuthMessage } from './auth-lines.ts';
import { BRUTEFORCE_QUIET_MS, BruteforceWindow, FloodLimit } from './limits.ts';
import { authSignal, type SignalBody } from './signals.ts';

const TRAD = 'Nov 27 10:00:00 web-01';
const RFC = '2026-11-27T10:00:00.123456+00:00 web-01';

describe('auth log lines (DESIGN §3 detection)', () => {
  it('sudo: the invoking user, the command, and severity 4 for a shell', () => {
    const line = `${TRAD} sudo:    alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/apt-get install nc`;
    const event = parseAuthLine(line);
    assert.deepEqual(event, {
      kind: 'sudo',
      user: 'alice',
      tty: 'pts/0',
      pwd: '/home/alice',
      runAs: 'root',
      command: '/usr/bin/apt-get install nc',
      shell: false,
    });
    const signal = authSignal(event as NonNullable<typeof event>, new Date(0), () => 1000);
    assert.equal(signal.signal_type, 'sudo_command_executed');
    assert.equal(signal.severity, 3);
    assert.equal(signal.identity_id, '1000');
    assert.equal(signal.identity_name, 'alice');
    assert.match(signal.description, /apt-get install nc/);
    for (const shell of ['/bin/sh', '/usr/bin/bash -i', 'dash', '/usr/bin/zsh', '/bin/su -']) {
      const e = parseAuthLine(`${RFC} sudo[12]: bob : TTY=pts/1 ; PWD=/ ; USER=root ; COMMAND=${shell}`);
      assert.equal(e?.kind === 'sudo' && e.shell, true, shell);
      assert.equal(authSignal(e as NonNullable<typeof e>, new Date(0), () => undefined).severity, 4, shell);
    }
  });

  it('sudo: a command holding " ; " is kept whole; failures and session lines are not commands', () => {
    const e = parseAuthLine(`${TRAD} sudo: alice : TTY=pts/0 ; PWD=/ ; USER=root ; COMMAND=/bin/echo a ; b`);
    assert.equal(e?.kind === 'sudo' && e.command, '/bin/echo a ; b');
    assert.equal(
      parseAuthLine(
        `${TRAD} sudo: alice : 3 incorrect password attempts ; TTY=pts/0 ; PWD=/ ; USER=root ; COMMAND=/bin/id`,
      ),
      undefined,
    );
    assert.equal(parseAuthLine(`${TRAD} sudo: pam_unix(sudo:session): session opened for user root(uid=0)`), undefined);
  });

  it('sshd: failed (invalid user too) and accepted logins with the address', () => {
    assert.deepEqual(
      parseAuthLine(`${TRAD} sshd[811]: Failed password for invalid user admin from 203.0.113.5 port 52022 ssh2`),
      {
        kind: 'ssh_failed',
        method: 'password',
        invalidUser: true,
        user: 'admin',
        address: '203.0.113.5',
        port: '52022',
      },
    );
    assert.deepEqual(parseAuthLine(`${RFC} sshd[811]: Failed publickey for root from 2001:db8::1 port 22 ssh2`), {
      kind: 'ssh_failed',
      method: 'publickey',
      invalidUser: false,
      user: 'root',
      address: '2001:db8::1',
      port: '22',
    });
    assert.deepEqual(
      parseAuthMessage('sshd', 'Accepted publickey for alice from 198.51.100.7 port 5022 ssh2: ED25519 SHA256:abc'),
      { kind: 'ssh_accepted', method: 'publickey', user: 'alice', address: '198.51.100.7', port: '5022' },
    );
    assert.equal(parseAuthLine(`${TRAD} sshd[1]: Connection closed by 203.0.113.5 port 4 [preauth]`), undefined);
  });

  it('useradd: the new user', () => {
    assert.deepEqual(
      parseAuthLine(
        `${TRAD} useradd[9]: new user: name=eve, UID=1001, GID=1001, home=/home/eve, shell=/bin/bash, from=/dev/pts/0`,
      ),
      { kind: 'user_created', user: 'eve', uid: '1001', home: '/home/eve', shell: '/bin/bash' },
    );
  });

  it('other programs, other formats and hostile lines give nothing, in time linear in the line', () => {
    assert.equal(parseAuthLine(`${TRAD} CRON[5]: pam_unix(cron:session): session opened for user root`), undefined);
    assert.equal(parseAuthLine('sudo: alice : TTY=pts/0 ; PWD=/ ; USER=root ; COMMAND=/bin/id'), undefined);
    assert.equal(parseAuthLine(''), undefined);
    const hostile = `${TRAD} sudo: ${'a : TTY= ; '.repeat(200_000)}`;
    const t0 = performance.now();
    parseAuthLine(hostile);
    parseAuthLine(`${TRAD} sshd[1]: Failed ${'x '.repeat(500_000)}`);
    parseAuthLine(`${' '.repeat(1_000_000)}`);
    // Not a speed goal: a guard against a pattern that backtracks (which takes minutes here).
    assert.ok(performance.now() - t0 < 2000);
  });
});

describe('brute force window and flood limit', () => {
  it('ssh_bruteforce at the 10th failure from one address within 60 s, then quiet for 10 min', () => {
    const w = new BruteforceWindow();
    const t = 1_000_000;
    for (let i = 0; i < 9; i++) assert.equal(w.fail('203.0.113.5', t + i * 1000), undefined);
    assert.equal(w.fail('198.51.100.1', t + 9000), undefined, 'another address counts apart');
    assert.equal(w.fail('203.0.113.5', t + 9500), 10);
    assert.equal(w.fail('203.0.113.5', t + 10_000), undefined, 'one alert per address per 10 min');
    assert.equal(w.fail('203.0.113.5', t + BRUTEFORCE_QUIET_MS + 20_000), undefined, 'the window emptied');
    // Past the quiet time: that failure and 8 more, then the 10th in the window alerts again.
    for (let i = 0; i < 8; i++) assert.equal(w.fail('203.0.113.5', t + BRUTEFORCE_QUIET_MS + 30_000 + i), undefined);
    assert.equal(w.fail('203.0.113.5', t + BRUTEFORCE_QUIET_MS + 31_000), 10);
    const slow = new BruteforceWindow();
    for (let i = 0; i < 30; i++) assert.equal(slow.fail('192.0.2.1', t + i * 7000), undefined, 'spread over minutes');
  });

  it('at most N a minute of one type; the rest in one summary of that type when the minute ends', () => {
    const limit = new FloodLimit(20);
    const minute = 60_000 * 1000;
    const signal = (i: number, type = 'ssh_login_failed'): SignalBody => ({
      signal_type: type as SignalBody['signal_type'],
      severity: i === 99_999 ? 3 : 2,
      description: `event ${i}`,
      identity_id: 'u',
      identity_name: 'u',
      created_at: new Date(minute).toISOString(),
    });
    let sent = 0;
    for (let i = 0; i < 100_000; i++) {
      const r = limit.admit(signal(i), minute + 10);
      assert.deepEqual(r.summaries, []);
      if (r.send) sent++;
    }
    assert.equal(sent, 20);
    assert.equal(limit.admit(signal(0, 'user_created'), minute + 20).send, true, 'another type counts apart');
    assert.deepEqual(limit.flush(minute + 59_999), [], 'not before the minute ends');
    const [summary, ...rest] = limit.flush(minute + 60_000);
    assert.deepEqual(rest, []);
    assert.equal(summary.signal_type, 'ssh_login_failed');
    assert.equal(summary.severity, 3, 'the highest severity suppressed');
    assert.match(summary.description, /^flood limit: 99980 more ssh_login_failed events/);
    assert.match(summary.description, /the last: event 99999$/);
    assert.equal(limit.admit(signal(1), minute + 60_001).send, true, 'a new minute sends again');
  });
});
