import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { collectSystemInfo, ErrorLineCounter, parseOsRelease } from './system-info.ts';

test('parses os-release identity fields and unquotes values', () => {
  const text = [
    'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"',
    'NAME="Debian GNU/Linux"',
    'VERSION_ID="12"',
    'ID=debian',
    'HOME_URL="https://www.debian.org/"',
    '# comment',
    'VERSION_CODENAME=bookworm',
    'ID_LIKE="rhel \\"fedora\\""',
  ].join('\n');
  assert.deepEqual(parseOsRelease(text), {
    PRETTY_NAME: 'Debian GNU/Linux 12 (bookworm)',
    NAME: 'Debian GNU/Linux',
    VERSION_ID: '12',
    ID: 'debian',
    VERSION_CODENAME: 'bookworm',
    ID_LIKE: 'rhel "fedora"',
  });
});

describe('ErrorLineCounter', () => {
  const now = new Date('2026-11-21T12:00:00.000Z');
  const count = (lines: string[]): number => {
    const c = new ErrorLineCounter(now);
    for (const l of lines) c.onLine(Buffer.from(l));
    return c.count;
  };

  test('counts slog and JSON ERROR lines within the last 24 hours', () => {
    assert.equal(
      count([
        'time=2026-11-21T11:00:00.000Z level=ERROR msg="a"',
        '{"time":"2026-11-20T12:30:00Z","level":"ERROR","msg":"b"}',
        'time="2026-11-21T00:00:00+01:00" level=ERROR msg="quoted time"',
      ]),
      3,
    );
  });

  test('ignores older lines, other levels and lines without a time', () => {
    assert.equal(
      count([
        'time=2026-11-20T11:59:59.000Z level=ERROR msg="25h ago"',
        'time=2026-11-21T11:00:00.000Z level=INFO msg="ERROR in text only"',
        'level=ERROR msg="no time"',
        'time=2026-11-21T13:00:00.000Z level=ERROR msg="future"',
      ]),
      0,
    );
  });
});

describe('collectSystemInfo', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(os.tmpdir(), 'guard-sysinfo-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('reads every source and reports the agent version and error count', async () => {
    await writeFile(join(dir, 'os-release'), 'ID=debian\nVERSION_ID="12"\n');
    await writeFile(join(dir, 'unpriv'), '2\n');
    await writeFile(join(dir, 'vmlinux'), '');
    await writeFile(join(dir, 'probe-status.json'), '{"state":"attached"}');
    const { info, errors } = await collectSystemInfo({
      agentVersion: '9.9.9',
      stateDir: dir,
      errorLines24h: 4,
      now: new Date('2026-11-21T12:00:00Z'),
      sources: {
        osRelease: join(dir, 'os-release'),
        btfVmlinux: join(dir, 'vmlinux'),
        unprivilegedBpfDisabled: join(dir, 'unpriv'),
      },
    });
    assert.deepEqual(errors, []);
    assert.equal(info.agent_version, '9.9.9');
    assert.equal(info.kernel.release, os.release());
    assert.deepEqual(info.distro, { ID: 'debian', VERSION_ID: '12' });
    assert.deepEqual(info.ebpf, {
      btf_present: true,
      unprivileged_bpf_disabled: 2,
      probe_status: { state: 'attached' },
    });
    assert.deepEqual(info.agent_log, { error_lines_last_24h: 4 });
  });

  test('a missing source becomes a collection error and a null field; absent BTF and probe file are facts, not errors', async () => {
    const empty = await mkdtemp(join(dir, 'empty-'));
    const { info, errors } = await collectSystemInfo({
      agentVersion: '1',
      stateDir: empty,
      errorLines24h: null,
      now: new Date(),
      sources: {
        osRelease: join(empty, 'nope'),
        btfVmlinux: join(empty, 'nope2'),
        unprivilegedBpfDisabled: join(empty, 'nope3'),
      },
    });
    assert.equal(info.distro, null);
    assert.equal(info.ebpf.btf_present, false);
    assert.equal(info.ebpf.unprivileged_bpf_disabled, null);
    assert.equal(info.ebpf.probe_status, null);
    assert.deepEqual(
      errors.map((e) => e.source),
      [join(empty, 'nope'), join(empty, 'nope3')],
    );
    assert.match(errors[0].message, /no such file/);
  });

  test('a probe status file that is not JSON is recorded as an error', async () => {
    const d = await mkdtemp(join(dir, 'bad-'));
    await writeFile(join(d, 'probe-status.json'), '{not json');
    const { info, errors } = await collectSystemInfo({
      agentVersion: '1',
      stateDir: d,
      errorLines24h: 0,
      now: new Date(),
      sources: {
        osRelease: '/etc/os-release',
        btfVmlinux: '/nonexistent',
        unprivilegedBpfDisabled: '/proc/sys/kernel/unprivileged_bpf_disabled',
      },
    });
    assert.equal(info.ebpf.probe_status, null);
    assert.deepEqual(errors, [{ source: join(d, 'probe-status.json'), message: 'not valid JSON' }]);
  });
});
