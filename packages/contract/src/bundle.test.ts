import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUNDLE_CAP_BYTES, REDACTION_PATTERN, rotatedSegmentNumber } from './bundle.ts';

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
