import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BundleManifest, parseManifest } from './manifest.ts';
import { firstFault } from './schema-check.ts';

const valid = {
  bundle_version: 1,
  agent_version: '0.1.0',
  generated_at: '2026-11-21T10:00:00.000Z',
  trigger: 'cli',
  contents: [{ name: 'agent.log', size: 1234, sha256: 'a'.repeat(64) }],
  trimmed_segments: ['agent.log.7.gz'],
  redaction: { pattern: '^(api_key|enroll_token|.*_token|.*_secret)$', values_masked: 3, members: { 'agent.log': 3 } },
};

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

  test('keeps obfuscation {kinds, values} (collect --obfuscate) and checks it', () => {
    const obfuscated = { ...valid, obfuscation: { kinds: ['host', 'ip', 'user', 'email'], values: 7 } };
    assert.deepEqual(parseManifest(obfuscated), { ...obfuscated, collection_errors: [] });
    assert.equal('obfuscation' in parseManifest(valid), false);
    assert.throws(
      () => parseManifest({ ...valid, obfuscation: { kinds: ['path'], values: 1 } }),
      /obfuscation\.kinds must be an array of host, ip, user, email/,
    );
    assert.throws(
      () => parseManifest({ ...valid, obfuscation: { kinds: ['ip'], values: -1 } }),
      /obfuscation\.values must be a non-negative integer/,
    );
    assert.throws(() => parseManifest({ ...valid, obfuscation: { kinds: ['ip'] } }), /obfuscation\.values must be/);
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

describe('parseManifest beyond the contract example', () => {
  test('keeps request_id (a console_push bundle answers a bundle request)', () => {
    const pushed = { ...valid, trigger: 'console_push', request_id: 'bdr_123' };
    assert.deepEqual(parseManifest(pushed), { ...pushed, collection_errors: [] });
  });

  test('refuses a request_id that is not a non-empty string', () => {
    for (const request_id of [7, '', null])
      assert.throws(() => parseManifest({ ...valid, request_id }), /request_id must be a non-empty string/);
  });

  test('drops fields the schema does not declare, at every depth', () => {
    const noisy = {
      ...valid,
      extra: { a: 1 },
      contents: [{ ...valid.contents[0], mode: 420 }],
      redaction: { ...valid.redaction, note: 'x' },
      collection_errors: [{ source: 's', message: 'm', stack: 'long' }],
    };
    assert.deepEqual(parseManifest(noisy), { ...valid, collection_errors: [{ source: 's', message: 'm' }] });
  });

  test('returns a copy: changing the result leaves the input alone', () => {
    const input = structuredClone(valid);
    const parsed = parseManifest(input);
    parsed.contents[0].size = 0;
    parsed.redaction.members['agent.log'] = 0;
    assert.deepEqual(input, valid);
  });

  test('reads a null collection_errors as none', () => {
    assert.deepEqual(parseManifest({ ...valid, collection_errors: null }).collection_errors, []);
  });

  test('refuses sizes beyond 2^53 and member names equal to the manifest', () => {
    const member = valid.contents[0];
    assert.throws(
      () => parseManifest({ ...valid, contents: [{ ...member, size: 2 ** 60 }] }),
      /contents\[0\]\.size must be a non-negative integer/,
    );
    assert.throws(
      () => parseManifest({ ...valid, contents: [{ ...member, name: 'BUNDLE-MANIFEST.json' }] }),
      /contents\[0\]\.name must be a plain file name other than the manifest/,
    );
  });
});

describe('BundleManifest (the schema)', () => {
  test('is plain JSON: what a JSON round trip gives back is the same schema', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(BundleManifest)), BundleManifest);
  });

  test('accepts what parseManifest returns', () => {
    assert.equal(firstFault(BundleManifest, parseManifest(valid)), undefined);
  });
});
