// The batch selection policy as a pure function: offline_since's two forms, and which servers
// are asked or skipped and why.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentTable } from '../../db/index.ts';
import { offlineSinceInstant, selectByFilter, selectByIds } from './selection.ts';

const NOW = new Date('2026-11-28T10:00:00.000Z');

function agent(id: string, extra: Partial<AgentTable> = {}): AgentTable {
  return {
    id,
    tenant_id: 'tnt_1',
    api_key_hash: '',
    hostname: `${id}.example`,
    environment: 'prod',
    agent_version: '0.1.0',
    enrolled_at: NOW.toISOString(),
    revoked_at: null,
    last_seen_at: NOW.toISOString(),
    uptime_seconds: null,
    agent_uptime_seconds: null,
    last_heartbeat_at: null,
    ...extra,
  };
}

describe('offline_since', () => {
  it('a duration is that long before now', () => {
    assert.deepEqual(offlineSinceInstant('90m', NOW), new Date('2026-11-28T08:30:00.000Z'));
    assert.deepEqual(offlineSinceInstant('24h', NOW), new Date('2026-11-27T10:00:00.000Z'));
    assert.deepEqual(offlineSinceInstant('7d', NOW), new Date('2026-11-21T10:00:00.000Z'));
  });
  it('an RFC 3339 time, any offset, is that instant', () => {
    assert.deepEqual(offlineSinceInstant('2026-11-28T09:00:00+01:00', NOW), new Date('2026-11-28T08:00:00.000Z'));
  });
  it('anything else, or a time in the future, is an error saying what it takes', () => {
    for (const bad of ['yesterday', '24', '1w', '2026-11-28', '2026-11-28 08:00:00Z', '-5h'])
      assert.match(String(offlineSinceInstant(bad, NOW)), /RFC 3339 time .* or a duration/, bad);
    assert.match(String(offlineSinceInstant('2026-11-28T11:00:00Z', NOW)), /in the future/);
  });
});

describe('which servers a batch asks', () => {
  const busy = new Map([['agt_b', { id: 'brq_1', state: 'collecting' }]]);

  it('by ids: each once, in order; missing, revoked and busy ones skipped with their reason', () => {
    const found = new Map(
      [agent('agt_a'), agent('agt_b'), agent('agt_r', { revoked_at: NOW.toISOString() })].map((a) => [a.id, a]),
    );
    const s = selectByIds(['agt_a', 'agt_b', 'agt_r', 'agt_x', 'agt_a'], found, busy);
    assert.deepEqual(
      s.chosen.map((a) => a.id),
      ['agt_a'],
    );
    assert.deepEqual(
      s.skipped.map((k) => [k.server_id, k.hostname, k.reason]),
      [
        ['agt_b', 'agt_b.example', 'open_request'],
        ['agt_r', 'agt_r.example', 'revoked'],
        ['agt_x', null, 'not_found'],
      ],
    );
    assert.match(s.skipped[0].detail, /brq_1, collecting/);
  });

  it('by filter: offline servers skipped unless offline_since chose them', () => {
    const matched = [agent('agt_on'), agent('agt_off', { last_seen_at: null })];
    const online = (a: AgentTable) => a.last_seen_at !== null;
    const plain = selectByFilter(matched, { environment: 'prod' }, online, new Map());
    assert.deepEqual(
      plain.chosen.map((a) => a.id),
      ['agt_on'],
    );
    assert.deepEqual(
      plain.skipped.map((k) => k.reason),
      ['offline'],
    );
    const since = selectByFilter([matched[1]], { offline_since: '24h' }, online, new Map());
    assert.deepEqual(
      since.chosen.map((a) => a.id),
      ['agt_off'],
    );
  });
});
