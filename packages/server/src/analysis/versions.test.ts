import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareVersions, newestVersion } from './versions.ts';

describe('agent versions', () => {
  it('compare as semantic versions, numbers as numbers', () => {
    assert.ok((compareVersions('0.1.0', '0.2.0') ?? 0) < 0);
    assert.ok((compareVersions('0.10.0', '0.9.9') ?? 0) > 0);
    assert.equal(compareVersions('1.2.3', 'v1.2.3'), 0);
  });
  it('a pre-release is older than its release (SemVer §11)', () => {
    assert.ok((compareVersions('1.0.0-rc.1', '1.0.0') ?? 0) < 0);
    assert.ok((compareVersions('1.0.0-rc.2', '1.0.0-rc.10') ?? 0) < 0);
    assert.ok((compareVersions('1.0.0-alpha', '1.0.0-alpha.1') ?? 0) < 0);
    assert.ok((compareVersions('1.0.0-alpha.beta', '1.0.0-beta') ?? 0) < 0);
  });
  it('what is not a version compares with nothing', () => {
    assert.equal(compareVersions('dev', '0.1.0'), undefined);
    assert.equal(compareVersions('', ''), undefined);
  });
  it('the newest of a list skips what is not a version', () => {
    assert.equal(newestVersion(['0.1.0', 'dev', '0.3.0', '0.2.9', '']), '0.3.0');
    assert.equal(newestVersion(['dev']), undefined);
  });
});
