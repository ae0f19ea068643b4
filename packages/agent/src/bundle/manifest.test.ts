import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REDACTION_PATTERN_SOURCE } from '@guard/contract/bundle';
import { parseManifest } from '@guard/contract/manifest';
import { buildManifest, manifestBytes } from './manifest.ts';

const sha = 'a'.repeat(64);
const input = {
  agentVersion: '0.1.0',
  generatedAt: new Date('2026-11-21T10:00:00.000Z'),
  trigger: 'cli' as const,
  contents: [
    { name: 'agent.log', size: 1234, sha256: sha },
    { name: 'agent.log.1.gz', size: 99, sha256: sha },
  ],
  trimmedSegments: ['agent.log.7.gz'],
  maskedByMember: new Map([
    ['agent.log', 3],
    ['agent.log.1.gz', 0],
  ]),
  collectionErrors: [{ source: '/etc/os-release', message: 'permission denied' }],
};

test('builds the manifest exactly as the contract lays it out', () => {
  assert.deepEqual(buildManifest(input), {
    bundle_version: 1,
    agent_version: '0.1.0',
    generated_at: '2026-11-21T10:00:00.000Z',
    trigger: 'cli',
    contents: input.contents,
    trimmed_segments: ['agent.log.7.gz'],
    redaction: {
      pattern: '^(api_key|enroll_token|.*_token|.*_secret)$',
      values_masked: 3,
      members: { 'agent.log': 3, 'agent.log.1.gz': 0 },
    },
    collection_errors: [{ source: '/etc/os-release', message: 'permission denied' }],
  });
});

test('the pattern recorded is the contract pattern', () => {
  assert.equal(buildManifest(input).redaction.pattern, REDACTION_PATTERN_SOURCE);
});

test('serialised manifest parses back through the contract validator', () => {
  const bytes = manifestBytes(buildManifest(input));
  assert.deepEqual(parseManifest(JSON.parse(bytes.toString())), buildManifest(input));
});

test('an empty bundle has zero masked values and empty lists', () => {
  const m = buildManifest({
    ...input,
    contents: [],
    trimmedSegments: [],
    maskedByMember: new Map(),
    collectionErrors: [],
  });
  assert.equal(m.redaction.values_masked, 0);
  assert.deepEqual(m.redaction.members, {});
  assert.deepEqual(m.trimmed_segments, []);
});

test("records the operator's extra keys in redaction.extra_keys, after the contract fields", () => {
  const m = buildManifest({ ...input, extraKeys: ['password', '^x-.*-key$'] });
  assert.deepEqual(m.redaction, {
    pattern: REDACTION_PATTERN_SOURCE,
    values_masked: 3,
    members: { 'agent.log': 3, 'agent.log.1.gz': 0 },
    extra_keys: ['password', '^x-.*-key$'],
  });
  assert.deepEqual(parseManifest(JSON.parse(manifestBytes(m).toString())), m);
});

test('without extra keys the redaction block holds exactly the contract fields', () => {
  for (const extraKeys of [undefined, []]) {
    const m = buildManifest({ ...input, extraKeys });
    assert.deepEqual(Object.keys(m.redaction), ['pattern', 'values_masked', 'members']);
  }
});

test('a console_push bundle carries the request id right after its trigger; a cli bundle has none', () => {
  const pushed = buildManifest({ ...input, trigger: 'console_push', requestId: 'brq_123' });
  assert.equal(pushed.request_id, 'brq_123');
  assert.deepEqual(Object.keys(pushed).slice(2, 5), ['generated_at', 'trigger', 'request_id']);
  assert.deepEqual(parseManifest(JSON.parse(manifestBytes(pushed).toString())), pushed);
  assert.equal('request_id' in buildManifest(input), false);
});
