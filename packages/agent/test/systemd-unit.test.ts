// packages/agent/systemd/guard-agent.service (the packaging ships it): it runs the daemon in the
// foreground, stops it with SIGTERM within its grace time, and is hardened: the least the
// detectors need (issue 18) and nothing more. systemd-analyze
// checks its syntax and rates its exposure when the host has it.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { AGENT_DIR, BIN } from './harness.ts';

const execFileP = promisify(execFile);
const UNIT = join(AGENT_DIR, 'systemd', 'guard-agent.service');

async function directives(): Promise<Map<string, string[]>> {
  const map = new Map<string, string[]>();
  for (const raw of (await readFile(UNIT, 'utf8')).split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('[')) continue;
    const at = line.indexOf('=');
    const key = line.slice(0, at);
    map.set(key, [...(map.get(key) ?? []), line.slice(at + 1)]);
  }
  return map;
}

async function hasSystemdAnalyze(): Promise<boolean> {
  return execFileP('systemd-analyze', ['--version']).then(
    () => true,
    () => false,
  );
}

describe('the systemd unit', () => {
  it('runs `guard-agent --config /etc/guard/agent.yaml daemon` in the foreground and restarts it on failure', async () => {
    const d = await directives();
    assert.deepEqual(d.get('ExecStart'), ['/usr/bin/guard-agent --config /etc/guard/agent.yaml daemon']);
    assert.deepEqual(d.get('Type'), ['simple']);
    assert.deepEqual(d.get('Restart'), ['on-failure']);
    assert.deepEqual(d.get('WantedBy'), ['multi-user.target']);
  });

  it('stops with SIGTERM to the daemon alone (it stops its own child), SIGKILL only after the grace time', async () => {
    const d = await directives();
    assert.deepEqual(d.get('KillMode'), ['mixed']);
    assert.equal(d.get('KillSignal'), undefined, 'SIGTERM, the default');
    assert.ok(Number.parseInt(d.get('TimeoutStopSec')?.[0] ?? '90', 10) <= 30);
  });

  it('is hardened: three capabilities, a read-only system but its state and log directories, no JIT-breaking W^X rule', async () => {
    const d = await directives();
    for (const [key, value] of Object.entries({
      NoNewPrivileges: 'yes',
      // Reading what it watches (DAC_READ_SEARCH); the exec probe's helper (BPF, PERFMON).
      CapabilityBoundingSet: 'CAP_DAC_READ_SEARCH CAP_BPF CAP_PERFMON',
      AmbientCapabilities: '',
      ProtectSystem: 'strict',
      ProtectHome: 'read-only',
      PrivateTmp: 'yes',
      PrivateDevices: 'yes',
      ProtectKernelTunables: 'yes',
      ProtectKernelModules: 'yes',
      ProtectControlGroups: 'yes',
      RestrictNamespaces: 'yes',
      RestrictSUIDSGID: 'yes',
      LockPersonality: 'yes',
      SystemCallArchitectures: 'native',
      StateDirectory: 'guard',
      LogsDirectory: 'guard',
      UMask: '0077',
    }))
      assert.deepEqual(d.get(key), [value], key);
    assert.equal(d.get('MemoryDenyWriteExecute'), undefined, "V8's JIT needs writable and executable memory");
    assert.deepEqual(d.get('SystemCallFilter'), ['@system-service', 'bpf'], 'the system service set and bpf(2) alone');
    assert.equal(d.get('ReadWritePaths'), undefined, 'nothing writable beyond its state and log directories');
  });

  it('systemd-analyze finds nothing wrong with it, and rates its exposure OK (≤ 3.0)', async (t) => {
    if (!(await hasSystemdAnalyze())) return t.skip('systemd-analyze is not installed');
    const dir = await mkdtemp(join(os.tmpdir(), 'guard-unit-'));
    try {
      // verify wants ExecStart to exist: point it at this checkout's launcher.
      const unit = join(dir, 'guard-agent.service');
      await writeFile(unit, (await readFile(UNIT, 'utf8')).replace('/usr/bin/guard-agent', BIN));
      const verified = await execFileP('systemd-analyze', ['verify', unit]);
      assert.equal(verified.stderr.trim(), '', verified.stderr);
      const security = await execFileP('systemd-analyze', ['security', '--offline=true', '--no-pager', unit]);
      const m = /Overall exposure level for guard-agent\.service: (\d+\.\d)/.exec(security.stdout);
      assert.ok(m, security.stdout.slice(-500));
      assert.ok(Number(m[1]) <= 3.0, `exposure ${m[1]}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
