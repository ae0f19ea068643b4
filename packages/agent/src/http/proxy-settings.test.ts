import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configProxy, proxySettings } from './proxy-settings.ts';

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

describe("proxySettings with the config file's proxy keys", () => {
  const env = { HTTP_PROXY: 'http://env-http:1', HTTPS_PROXY: 'http://env-https:2', NO_PROXY: 'env.example' };

  it('a config key wins over its variable', () => {
    assert.deepEqual(proxySettings(env, { https: 'http://cfg:3128' }), {
      HTTP_PROXY: 'http://env-http:1',
      HTTPS_PROXY: 'http://cfg:3128',
      NO_PROXY: 'env.example',
    });
    assert.deepEqual(proxySettings(env, { http: 'http://cfg:1', no_proxy: 'a.example b.example' }), {
      HTTP_PROXY: 'http://cfg:1',
      HTTPS_PROXY: 'http://env-https:2',
      NO_PROXY: 'a.example,b.example',
    });
  });

  it('an empty config value means no proxy, whatever the environment says', () => {
    assert.deepEqual(proxySettings(env, { http: '', https: '', no_proxy: '' }), {});
  });

  it('config proxy.http alone also carries https:// when nothing names an https proxy', () => {
    assert.deepEqual(proxySettings({}, { http: 'http://cfg:1' }), {
      HTTP_PROXY: 'http://cfg:1',
      HTTPS_PROXY: 'http://cfg:1',
    });
  });
});

describe('configProxy', () => {
  const source = '/etc/guard/agent.yaml';

  it('no proxy key, or null: nothing', () => {
    assert.deepEqual(configProxy({}, source), {});
    assert.deepEqual(configProxy({ proxy: null }, source), {});
    assert.deepEqual(configProxy({ proxy: { https: null } }, source), {});
  });

  it('reads http, https and no_proxy (a string or a list)', () => {
    assert.deepEqual(
      configProxy(
        { proxy: { http: 'http://p:3128', https: 'https://u:pw@p:3129', no_proxy: ['a.example', '.corp'] } },
        source,
      ),
      { http: 'http://p:3128', https: 'https://u:pw@p:3129', no_proxy: 'a.example,.corp' },
    );
    assert.deepEqual(configProxy({ proxy: { no_proxy: 'a, b' } }, source), { no_proxy: 'a, b' });
  });

  it('refuses what it cannot use, naming the key and the file, never the value', () => {
    const cases: [unknown, RegExp][] = [
      ['http://p:3128', /^config key proxy must be a mapping/],
      [['http://p:3128'], /^config key proxy must be a mapping/],
      [{ https: 'socks5://u:SECRET@p:1080' }, /^config key proxy\.https must be a proxy URL/],
      [{ http: 'not a url' }, /^config key proxy\.http must be a proxy URL/],
      [{ http: 3128 }, /^config key proxy\.http must be a proxy URL/],
      [{ noproxy: 'x' }, /^config key proxy\.noproxy is not known: the keys are http, https and no_proxy/],
      [{ no_proxy: { a: 1 } }, /^config key proxy\.no_proxy must be a string or a list of host names/],
    ];
    for (const [proxy, message] of cases)
      assert.throws(
        () => configProxy({ proxy }, source),
        (error: Error) => {
          assert.match(error.message, message);
          assert.ok(error.message.endsWith(`(in ${source})`), error.message);
          assert.ok(!error.message.includes('SECRET'));
          return true;
        },
      );
  });
});
