import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareBundles } from './diff.ts';

const side = (
  members: [string, string][],
  findingCodes: string[],
  system?: Record<string, string | number | boolean | null>,
) => ({ members: members.map(([name, sha256]) => ({ name, sha256 })), findingCodes, system });

test('members are added, removed, changed or the same, by name and SHA-256, sorted by name', () => {
  const d = compareBundles(
    side(
      [
        ['system.json', 'b2'],
        ['agent.log', 'a1'],
        ['agent.log.2.gz', 'c'],
      ],
      [],
    ),
    side(
      [
        ['agent.log', 'a1'],
        ['agent.log.1.gz', 'x'],
        ['system.json', 'b1'],
      ],
      [],
    ),
  );
  assert.deepEqual(d.members, [
    { name: 'agent.log', change: 'same' },
    { name: 'agent.log.1.gz', change: 'removed' },
    { name: 'agent.log.2.gz', change: 'added' },
    { name: 'system.json', change: 'changed' },
  ]);
});

test('findings are compared by code, each code once', () => {
  const d = compareBundles(
    side([], ['rule.oom', 'rule.oom', 'log.frequent_error']),
    side([], ['ebpf.btf_missing', 'log.frequent_error']),
  );
  assert.deepEqual(d.findings, { new: ['rule.oom'], resolved: ['ebpf.btf_missing'] });
});

test('system fields: only those both report, a reboot beyond a minute, unknown when either side was not read', () => {
  const d = compareBundles(
    side([], [], {
      agent_version: '2',
      'uptime.booted_at': '2026-11-21T10:00:30.000Z',
      'spool.depth': 0,
      'time_sync.synchronized': 'unknown',
    }),
    side([], [], { agent_version: '1', 'uptime.booted_at': '2026-11-21T10:00:00.000Z', 'spool.depth': 4 }),
  );
  assert.deepEqual(d.system_changes, [
    { field: 'agent_version', before: '1', after: '2' },
    { field: 'spool.depth', before: 4, after: 0 },
  ]);
  const rebooted = compareBundles(
    side([], [], { 'uptime.booted_at': '2026-11-22T08:00:00.000Z' }),
    side([], [], { 'uptime.booted_at': '2026-11-21T10:00:00.000Z' }),
  );
  assert.equal(rebooted.system_changes?.length, 1);
  assert.equal(compareBundles(side([], [], {}), side([], [])).system_changes, null);
});
