import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUNDLE_CAP_BYTES, parseManifest, REDACTION_PATTERN, rotatedSegmentNumber } from './bundle.ts';

const valid = {
  bundle_version: 1,
  agent_version: '0.1.0',
  generated_at: '2026-11-21T10:00:00.000Z',
  trigger: 'cli',
  contents: [{ name: 'agent.log', size: 1234, sha256: 'a'.repeat(64) }],
  trimmed_segments: ['agent.log.7.gz'],
  redaction: { pattern: '^(api_key|enroll_token|.*_token|.*_secret)$', values_masked: 3, members: { 'agent.log': 3 } },
};

test('the cap is 180 MiB', () => {
  assert.equal(BUNDLE_CAP_BYTES, 188743680);
});

test('the redaction pattern matches the contract keys only', () => {
  for (const k of ['api_key', 'enroll_token', 'refresh_token', '_token', 'client_secret', 'a.b_secret'])
    assert.ok(REDACTION_PATTERN.test(k), k);
  for (const k of ['token', 'secret', 'api_keys', 'xapi_key', 'API_KEY', 'tokens'])
    assert.ok(!REDACTION_PATTERN.test(k), k);
});

test('rotated segment names follow the logrotate compress convention', () => {
  assert.equal(rotatedSegmentNumber('agent.log', 'agent.log.1.gz'), 1);
  assert.equal(rotatedSegmentNumber('agent.log', 'agent.log.12.gz'), 12);
  for (const n of [
    'agent.log.0.gz',
    'agent.log.01.gz',
    'agent.log.1',
    'agent.log.x.gz',
    'other.log.1.gz',
    'agent.log..gz',
  ])
    assert.equal(rotatedSegmentNumber('agent.log', n), undefined, n);
});

describe('parseManifest', () => {
  test('accepts the contract example and defaults collection_errors to []', () => {
    assert.deepEqual(parseManifest(valid), { ...valid, collection_errors: [] });
  });

  test('keeps redaction.extra_keys when present (agents configured with redaction.extra_keys)', () => {
    const withExtra = { ...valid, redaction: { ...valid.redaction, extra_keys: ['password', '^x-.*-key$'] } };
    assert.deepEqual(parseManifest(withExtra), { ...withExtra, collection_errors: [] });
  });

  test('adds no redaction.extra_keys to a manifest without it', () => {
    assert.equal('extra_keys' in parseManifest(valid).redaction, false);
  });

  const broken: [string, unknown, RegExp][] = [
    ['not an object', [], /the document must be a JSON object/],
    ['wrong bundle_version', { ...valid, bundle_version: 2 }, /bundle_version/],
    ['unknown trigger', { ...valid, trigger: 'cron' }, /trigger must be one of cli, console_push/],
    ['bad timestamp', { ...valid, generated_at: 'yesterday' }, /generated_at/],
    [
      'path in a member name',
      { ...valid, contents: [{ name: '../etc/passwd', size: 1, sha256: 'a'.repeat(64) }] },
      /contents\[0\]\.name/,
    ],
    ['negative size', { ...valid, contents: [{ name: 'a', size: -1, sha256: 'a'.repeat(64) }] }, /contents\[0\]\.size/],
    ['uppercase sha256', { ...valid, contents: [{ name: 'a', size: 1, sha256: 'A'.repeat(64) }] }, /sha256/],
    ['duplicate member', { ...valid, contents: [valid.contents[0], valid.contents[0]] }, /unique/],
    ['members counts', { ...valid, redaction: { ...valid.redaction, members: { a: 'x' } } }, /redaction\.members/],
    ['collection errors', { ...valid, collection_errors: [{ source: 1 }] }, /collection_errors/],
    [
      'extra keys that are not a list',
      { ...valid, redaction: { ...valid.redaction, extra_keys: 'password' } },
      /redaction\.extra_keys must be an array of strings/,
    ],
    [
      'extra keys that are not strings',
      { ...valid, redaction: { ...valid.redaction, extra_keys: ['password', 1] } },
      /redaction\.extra_keys must be an array of strings/,
    ],
  ];
  for (const [name, doc, re] of broken) {
    test(`refuses a manifest with ${name}`, () => {
      assert.throws(() => parseManifest(doc), re);
    });
  }
});
