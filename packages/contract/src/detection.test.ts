import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AgentDetectionPolicy,
  DETECTION_SIGNAL_TYPE_NAMES,
  DETECTION_SIGNAL_TYPES,
  DetectionPolicyChange,
  DetectorStatus,
  IDEMPOTENCY_KEY_PATTERN,
  isDetectionSignalType,
} from './detection.ts';
import { firstFault, type JsonSchema } from './schema-check.ts';

describe('detection contract', () => {
  it('names the seven types of DESIGN §3 once each, in its order, with their default severities', () => {
    assert.deepEqual(
      DETECTION_SIGNAL_TYPES.map((t) => [t.signal_type, t.default_severity]),
      [
        ['sudo_command_executed', 3],
        ['ssh_login_failed', 2],
        ['ssh_bruteforce', 4],
        ['ssh_login_succeeded', 1],
        ['user_created', 3],
        ['critical_file_modified', 4],
        ['exec_from_writable_dir', 4],
      ],
    );
    assert.deepEqual(
      DETECTION_SIGNAL_TYPES.map((t) => t.signal_type),
      [...DETECTION_SIGNAL_TYPE_NAMES],
    );
    for (const t of DETECTION_SIGNAL_TYPES) assert.ok(t.description.length > 10 && !t.description.includes('\n'));
    assert.ok(isDetectionSignalType('ssh_bruteforce'));
    assert.ok(!isDetectionSignalType('custom_thing'));
  });

  it('idempotency keys: 1–200 characters of letters, digits and . _ : -', () => {
    const re = new RegExp(IDEMPOTENCY_KEY_PATTERN);
    for (const ok of ['a', 'sig:2026-11-21T10:00:00.000Z:42', 'x'.repeat(200), 'A_b.c-d:9']) assert.ok(re.test(ok), ok);
    for (const bad of ['', 'x'.repeat(201), 'a b', 'a/b', 'ä', 'a\nb', 'a,b']) assert.ok(!re.test(bad), bad);
  });

  it('detector status and the agent policy: what the heartbeat sends and the agent is handed', () => {
    const ok = (schema: unknown, value: unknown) => firstFault(schema as JsonSchema, value) === undefined;
    assert.ok(
      ok(DetectorStatus, { name: 'exec', state: 'failed', reason: 'no BTF', last_event_at: '2026-11-21T10:00:00Z' }),
    );
    assert.ok(!ok(DetectorStatus, { name: 'ebpf', state: 'running' }));
    assert.ok(!ok(DetectorStatus, { name: 'exec', state: 'crashed' }));
    assert.ok(!ok(DetectorStatus, { name: 'exec', state: 'failed', reason: 'x'.repeat(501) }));
    assert.ok(!ok(DetectorStatus, { name: 'exec', state: 'running', extra: 1 }));
    const policy = {
      version: '3',
      signal_types: { ssh_login_succeeded: { enabled: false, severity: 1, overridden: false } },
    };
    assert.ok(ok(AgentDetectionPolicy, policy));
    assert.ok(
      !ok(AgentDetectionPolicy, { ...policy, signal_types: { ssh_login_succeeded: { enabled: true, severity: 6 } } }),
    );
    assert.ok(ok(DetectionPolicyChange, { signal_types: { ssh_login_succeeded: { enabled: false, severity: null } } }));
    assert.ok(!ok(DetectionPolicyChange, { signal_types: { ssh_login_succeeded: { severity: 0 } } }));
    assert.ok(!ok(DetectionPolicyChange, { signal_types: { ssh_login_succeeded: { muted: true } } }));
  });
});
