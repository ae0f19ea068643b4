import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proxySettings } from './proxy-settings.ts';

describe('proxySettings', () => {
  it('no variables: no proxy', () => {
    assert.deepEqual(proxySettings({}), {});
  });

  it('empty variables count as unset', () => {
    assert.deepEqual(proxySettings({ http_proxy: '', HTTP_PROXY: '', https_proxy: '', NO_PROXY: '' }), {});
  });

  it('HTTPS_PROXY applies to https:// only', () => {
    assert.deepEqual(proxySettings({ HTTPS_PROXY: 'http://p:3128' }), { HTTPS_PROXY: 'http://p:3128' });
  });

  it('HTTP_PROXY alone applies to http:// and https://', () => {
    assert.deepEqual(proxySettings({ HTTP_PROXY: 'http://p:3128' }), {
      HTTP_PROXY: 'http://p:3128',
      HTTPS_PROXY: 'http://p:3128',
    });
  });

  it('both set: each scheme its own proxy', () => {
    assert.deepEqual(proxySettings({ HTTP_PROXY: 'http://a:1', HTTPS_PROXY: 'http://b:2' }), {
      HTTP_PROXY: 'http://a:1',
      HTTPS_PROXY: 'http://b:2',
    });
  });

  it('a non-empty lowercase form wins over the uppercase one', () => {
    assert.deepEqual(
      proxySettings({ https_proxy: 'http://low:1', HTTPS_PROXY: 'http://up:2', no_proxy: 'a', NO_PROXY: 'b' }),
      { HTTPS_PROXY: 'http://low:1', NO_PROXY: 'a' },
    );
    assert.deepEqual(proxySettings({ https_proxy: '', HTTPS_PROXY: 'http://up:2' }), { HTTPS_PROXY: 'http://up:2' });
  });

  it('NO_PROXY: commas or white space separate entries; IPv6 brackets are dropped', () => {
    assert.deepEqual(proxySettings({ NO_PROXY: ' example.org, .corp  *.svc\t[::1]:8080,,localhost ' }), {
      NO_PROXY: 'example.org,.corp,*.svc,::1:8080,localhost',
    });
  });
});
