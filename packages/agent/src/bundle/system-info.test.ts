import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { firstFault } from '@guard/contract/schema-check';
import { SystemInfo } from '@guard/contract/system-info';
import { DetectionStore, SPOOL_MAX } from '../detect/store.ts';
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
      logPath: join(dir, 'agent.log'),
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
      logPath: join(empty, 'agent.log'),
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
      logPath: join(d, 'agent.log'),
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

describe('system.json, second round: what support asks first', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(os.tmpdir(), 'guard-sysinfo2-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const sourcesIn = (d: string) => ({
    osRelease: '/etc/os-release',
    btfVmlinux: '/sys/kernel/btf/vmlinux',
    unprivilegedBpfDisabled: '/proc/sys/kernel/unprivileged_bpf_disabled',
    procUptime: join(d, 'uptime'),
    procStat: join(d, 'stat'),
    procMeminfo: join(d, 'meminfo'),
    timesyncDir: join(d, 'timesync'),
    timeDaemonPidFiles: { chronyd: join(d, 'chronyd.pid'), ntpd: join(d, 'ntpd.pid') },
  });

  test('uptime, memory, time sync, detectors and the real spool are read from their files', async () => {
    const d = await mkdtemp(join(dir, 'full-'));
    await writeFile(join(d, 'uptime'), '93784.52 180000.10\n');
    await writeFile(join(d, 'stat'), 'cpu  1 2 3 4\nintr 5\nbtime 1795809024\nprocesses 9\n');
    await writeFile(join(d, 'meminfo'), 'MemTotal:        2048000 kB\nMemFree:  10 kB\nMemAvailable:    1024000 kB\n');
    await mkdir(join(d, 'timesync'));
    await writeFile(join(d, 'timesync', 'synchronized'), '');
    await writeFile(
      join(d, 'probe-status.json'),
      JSON.stringify({
        updated_at: '2026-11-21T11:59:00.000Z',
        detectors: [
          { name: 'auth_log', state: 'running' },
          { name: 'exec', state: 'failed', reason: 'no BTF' },
        ],
        spool_depth: 2,
      }),
    );
    // The daemon's own store, with two signals waiting.
    const store = DetectionStore.open(d);
    const signal = {
      signal_type: 'ssh_login_failed' as const,
      severity: 2,
      description: 'x',
      identity_id: '1000',
      identity_name: 'alice',
      created_at: '2026-11-21T11:00:00.000Z',
    };
    store.record({ signals: [signal, signal] });
    const { info, errors } = await collectSystemInfo({
      agentVersion: '2.0.0',
      stateDir: d,
      logPath: join(d, 'agent.log'),
      errorLines24h: 0,
      now: new Date('2026-11-21T12:00:00Z'),
      sources: sourcesIn(d),
    });
    store.close();
    assert.deepEqual(errors, []);
    assert.deepEqual(info.uptime, { seconds: 93784, booted_at: new Date(1795809024 * 1000).toISOString() });
    assert.deepEqual(info.memory, { total_bytes: 2048000 * 1024, available_bytes: 1024000 * 1024 });
    assert.deepEqual(info.time_sync, {
      synchronized: true,
      source: 'systemd-timesyncd',
      detail: `${join(d, 'timesync', 'synchronized')} is present`,
    });
    assert.deepEqual(info.detectors, {
      updated_at: '2026-11-21T11:59:00.000Z',
      list: [
        { name: 'auth_log', state: 'running' },
        { name: 'exec', state: 'failed', reason: 'no BTF' },
      ],
    });
    assert.deepEqual(info.spool, { depth: 2, max: SPOOL_MAX });
    // Both directories are on the temp file system: its real size, from statfs.
    assert.equal(info.disk.state_dir?.path, d);
    assert.ok((info.disk.state_dir?.size_bytes ?? 0) > 0);
    assert.ok((info.disk.log_dir?.available_bytes ?? -1) <= (info.disk.log_dir?.size_bytes ?? 0));
    // The existing fields keep their shape beside the new ones: the contract's schema holds.
    assert.equal(firstFault(SystemInfo, JSON.parse(JSON.stringify(info))), undefined);
  });

  test("time sync: timesyncd's directory without the flag is false; only a pid file is unknown, named", async () => {
    const d = await mkdtemp(join(dir, 'time-'));
    const input = {
      agentVersion: '1',
      stateDir: d,
      logPath: join(d, 'agent.log'),
      errorLines24h: 0,
      now: new Date(),
      sources: sourcesIn(d),
    };
    const none = await collectSystemInfo(input);
    assert.deepEqual(none.info.time_sync, {
      synchronized: 'unknown',
      source: null,
      detail: 'no state of systemd-timesyncd, chronyd or ntpd found',
    });
    await writeFile(join(d, 'chronyd.pid'), '123\n');
    assert.equal((await collectSystemInfo(input)).info.time_sync.synchronized, 'unknown');
    assert.equal((await collectSystemInfo(input)).info.time_sync.source, 'chronyd');
    await mkdir(join(d, 'timesync'));
    const waiting = await collectSystemInfo(input);
    assert.equal(waiting.info.time_sync.synchronized, false);
    assert.equal(waiting.info.time_sync.source, 'systemd-timesyncd');
    // No daemon ever ran here: no detectors, no spool, and neither is an error.
    assert.equal(waiting.info.detectors, null);
    assert.equal(waiting.info.spool, null);
    // The fixture files are missing: each becomes a collection error and a null field.
    assert.equal(waiting.info.uptime, null);
    assert.equal(waiting.info.memory, null);
    assert.deepEqual(
      waiting.errors.map((e) => e.source),
      [join(d, 'uptime'), join(d, 'meminfo')],
    );
  });

  test("the host's own /proc: uptime and memory agree with the kernel's answers through os", async () => {
    const d = await mkdtemp(join(dir, 'host-'));
    const { info, errors } = await collectSystemInfo({
      agentVersion: '1',
      stateDir: d,
      logPath: join(d, 'agent.log'),
      errorLines24h: 0,
      now: new Date(),
      sources: {
        osRelease: '/etc/os-release',
        btfVmlinux: '/sys/kernel/btf/vmlinux',
        unprivilegedBpfDisabled: '/proc/sys/kernel/unprivileged_bpf_disabled',
      },
    });
    assert.deepEqual(
      errors.filter((e) => e.source.startsWith('/proc/') && e.source !== '/proc/sys/kernel/unprivileged_bpf_disabled'),
      [],
    );
    assert.equal(info.memory?.total_bytes, os.totalmem());
    assert.ok(Math.abs((info.uptime?.seconds ?? 0) - os.uptime()) <= 2);
    const booted = Date.parse(info.uptime?.booted_at ?? '');
    assert.ok(Math.abs(booted + os.uptime() * 1000 - Date.now()) < 5_000, 'booted_at + uptime is now');
  });
});
