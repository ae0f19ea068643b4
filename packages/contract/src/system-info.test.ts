import assert from 'node:assert/strict';
import { test } from 'node:test';
import { systemFieldChanged, systemFields } from './system-info.ts';

test('a first-round system.json gives the fields it has, and none it lacks', () => {
  const fields = systemFields({
    agent_version: '0.1.0',
    collected_at: '2026-11-21T10:00:00Z',
    kernel: { release: '6.1.0-18-amd64', version: '#1 SMP', machine: 'x86_64' },
    distro: { ID: 'debian', PRETTY_NAME: 'Debian GNU/Linux 12 (bookworm)' },
    ebpf: { btf_present: true, unprivileged_bpf_disabled: 2, probe_status: { state: 'attached' } },
    agent_log: { error_lines_last_24h: 3 },
  });
  assert.deepEqual(fields, {
    agent_version: '0.1.0',
    'kernel.release': '6.1.0-18-amd64',
    distro: 'Debian GNU/Linux 12 (bookworm)',
    'ebpf.btf_present': true,
    'ebpf.unprivileged_bpf_disabled': 2,
    'agent_log.error_lines_last_24h': 3,
  });
});

test('second-round fields flatten to dotted names; a field not read is null', () => {
  const fields = systemFields({
    uptime: null,
    memory: { total_bytes: 2048, available_bytes: 1024 },
    disk: { log_dir: { path: '/var/log/guard', size_bytes: 10, free_bytes: 5, available_bytes: 4 }, state_dir: null },
    time_sync: { synchronized: 'unknown', source: null, detail: 'none found' },
    detectors: {
      updated_at: null,
      list: [
        { name: 'exec', state: 'failed', reason: 'no BTF' },
        { name: 'auth_log', state: 'running' },
      ],
    },
    spool: { depth: 7, max: 10000 },
  });
  assert.deepEqual(fields, {
    'uptime.booted_at': null,
    'memory.total_bytes': 2048,
    'memory.available_bytes': 1024,
    'disk.log_dir.size_bytes': 10,
    'disk.log_dir.available_bytes': 4,
    'disk.state_dir.size_bytes': null,
    'disk.state_dir.available_bytes': null,
    'time_sync.synchronized': 'unknown',
    'time_sync.source': null,
    'detectors.exec': 'failed: no BTF',
    'detectors.auth_log': 'running',
    'spool.depth': 7,
  });
  assert.deepEqual(systemFields('not an object'), {});
});

test('free memory and disk change only beyond a tenth; a boot time only beyond a minute; anything else on any difference', () => {
  const GiB = 1024 ** 3;
  assert.equal(systemFieldChanged('disk.log_dir.available_bytes', 57.5 * GiB, 57.4 * GiB), false);
  assert.equal(systemFieldChanged('disk.log_dir.available_bytes', 10 * GiB, 1 * GiB), true);
  assert.equal(systemFieldChanged('memory.available_bytes', 2 * GiB, null), true);
  assert.equal(systemFieldChanged('memory.total_bytes', 2 * GiB, 2 * GiB - 1), true);
  assert.equal(systemFieldChanged('uptime.booted_at', '2026-11-21T10:00:00Z', '2026-11-21T10:00:59Z'), false);
  assert.equal(systemFieldChanged('uptime.booted_at', '2026-11-21T10:00:00Z', '2026-11-22T10:00:00Z'), true);
  assert.equal(systemFieldChanged('spool.depth', 0, 1), true);
});
