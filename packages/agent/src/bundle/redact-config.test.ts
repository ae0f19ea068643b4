// config.redacted.json, checked against DESIGN §3 (contract — config file): identity and
// credential keys removed at any depth, URL userinfo passwords masked in every string left,
// every other key kept as it is.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { redactConfig } from './redact-config.ts';

const FIXTURES = new URL('../../../../testdata/redaction/', import.meta.url);

/** The credential-like suffixes of DESIGN §3, as written there. */
const CREDENTIAL_SUFFIXES = [
  'password',
  'passwd',
  'secret',
  'token',
  'api_key',
  'apikey',
  'authorization',
  'private_key',
  'credential',
  'credentials',
  'cookie',
  'dsn',
];

function removes(key: string): boolean {
  const out = redactConfig({ [key]: 'v', keep: 1 }) as Record<string, unknown>;
  return !(key in out);
}

describe('golden fixture (testdata/redaction/config-credentials)', () => {
  test('the operator config redacts to the hand-written config.redacted.json', () => {
    const before = parseYaml(readFileSync(new URL('config-credentials.before.yaml', FIXTURES), 'utf8'));
    const after = JSON.parse(readFileSync(new URL('config-credentials.after.json', FIXTURES), 'utf8'));
    const out = redactConfig(before);
    assert.deepEqual(out, after);
    assert.ok(!JSON.stringify(out).includes('s3cr3t'), JSON.stringify(out, null, 2));
  });
});

describe('redactConfig: keys removed', () => {
  test('each credential-like suffix, alone and at the end of a longer name', () => {
    const kept: string[] = [];
    for (const suffix of CREDENTIAL_SUFFIXES)
      for (const key of [suffix, `db_${suffix}`, `x${suffix}`]) if (!removes(key)) kept.push(key);
    assert.deepEqual(kept, []);
  });

  test('names are compared lowercased, with -, . and camelCase boundaries read as _', () => {
    const keys = [
      'PASSWORD',
      'Password',
      'db.password',
      'Client_Secret',
      'client-secret',
      'clientSecret',
      'apiKey',
      'APIKey',
      'API_KEY',
      'Api-Key',
      'x-api-key',
      'X-Auth-Token',
      'oauth2Token',
      'privateKey',
      'ssl.private-key',
      'Authorization',
      'proxyAuthorization',
      'SessionCookie',
      'sentryDsn',
      'DB_PASSWD',
      'awsCredentials',
      'gitCredential',
    ];
    assert.deepEqual(
      keys.filter((k) => !removes(k)),
      [],
    );
  });

  test('identity keys and the two named credentials', () => {
    const keys = [
      'tenant_id',
      'agent_id',
      'host_id',
      'hostname',
      'host_name',
      'machine_id',
      'server_id',
      'server_name',
      'api_key',
      'enroll_token',
      'tenantId',
      'HOSTNAME',
    ];
    assert.deepEqual(
      keys.filter((k) => !removes(k)),
      [],
    );
  });

  test('keys of the redaction pattern, including dotted ones', () => {
    assert.deepEqual(
      ['req.api_key', 'deep_secret', 'refresh_token', 'a.b.client_secret'].filter((k) => !removes(k)),
      [],
    );
  });

  test('at any depth, inside objects and arrays of objects, with the whole value', () => {
    const out = redactConfig({
      a: { b: { c: { password: 'p1', keep: 1 } } },
      headers: { Authorization: 'Bearer t1', Accept: 'application/json' },
      list: [{ name: 'x', token: 't2' }, [{ apiKey: 'k3', n: 2 }]],
      credentials: { user: 'u', nested: { anything: 1 } },
    });
    assert.deepEqual(out, {
      a: { b: { c: { keep: 1 } } },
      headers: { Accept: 'application/json' },
      list: [{ name: 'x' }, [{ n: 2 }]],
    });
  });
});

describe('redactConfig: keys kept', () => {
  test('names that contain a credential word without ending with it', () => {
    const cfg = {
      tokens_total: 1,
      token_ttl_s: 2,
      password_min_length: 3,
      secretary: 4,
      cookie_domain: 5,
      api_keys: 6,
      dsn_timeout_s: 7,
      author: 8,
      credentials_file_mode: 9,
      passWord: 10, // camelCase inside a word reads as pass_word, which does not end with password
      log_path: '/var/log/guard/agent.log',
      state_dir: '/var/lib/guard',
      environment: 'production',
    };
    assert.deepEqual(redactConfig(cfg), cfg);
  });

  test('non-string values, empty objects and arrays come back as they were', () => {
    const cfg = { n: 1, f: 1.5, t: true, z: null, empty: {}, list: [], mixed: [1, 'a', null, [2]] };
    assert.deepEqual(redactConfig(cfg), cfg);
  });

  test('the input is not modified', () => {
    const cfg = { password: 'p', proxy: { https: 'http://u:p@h' } };
    const copy = structuredClone(cfg);
    redactConfig(cfg);
    assert.deepEqual(cfg, copy);
  });

  test('a __proto__ key is an ordinary key, not a prototype', () => {
    const cfg = JSON.parse('{"__proto__": {"polluted": "url http://u:pw@h"}, "n": 1}');
    const out = redactConfig(cfg) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, {
      polluted: 'url http://u:[REDACTED]@h',
    });
  });
});

describe('redactConfig: URL userinfo passwords', () => {
  const cases: [string, string][] = [
    ['http://user:PASS@proxy:3128', 'http://user:[REDACTED]@proxy:3128'],
    ['postgres://u:p@h/db', 'postgres://u:[REDACTED]@h/db'],
    [
      'postgresql+psycopg2://guard:pw@db:5432/guard?sslmode=require',
      'postgresql+psycopg2://guard:[REDACTED]@db:5432/guard?sslmode=require',
    ],
    ['redis://:only-a-password@cache:6379/0', 'redis://:[REDACTED]@cache:6379/0'],
    ['amqp://u:p%40ss@mq/vhost', 'amqp://u:[REDACTED]@mq/vhost'],
    ['amqp://u:p@ss:w0rd@mq/vhost', 'amqp://u:[REDACTED]@mq/vhost'],
    ['HTTPS://User:Pw@Example.COM/path?q=1#f', 'HTTPS://User:[REDACTED]@Example.COM/path?q=1#f'],
    [
      'primary=https://a:p1@m1/x, backup=https://b:p2@m2/y',
      'primary=https://a:[REDACTED]@m1/x, backup=https://b:[REDACTED]@m2/y',
    ],
    ['http://a:p1@h1,http://b:p2@h2', 'http://a:[REDACTED]@h1,http://b:[REDACTED]@h2'],
    ['see <https://u:p@h>', 'see <https://u:[REDACTED]@h>'],
  ];
  for (const [before, after] of cases) {
    test(`${before}`, () => {
      assert.deepEqual(redactConfig({ v: before }), { v: after });
    });
  }

  test('in every string at any depth, including inside arrays', () => {
    const out = redactConfig({
      proxy: { https: 'http://user:PASS@proxy:3128' },
      mirrors: ['https://m:p1@m1/repo', { url: 'ftp://f:p2@files/x' }, ['git+ssh://g:p3@git/repo.git']],
    });
    assert.deepEqual(out, {
      proxy: { https: 'http://user:[REDACTED]@proxy:3128' },
      mirrors: [
        'https://m:[REDACTED]@m1/repo',
        { url: 'ftp://f:[REDACTED]@files/x' },
        ['git+ssh://g:[REDACTED]@git/repo.git'],
      ],
    });
  });

  test('strings without a userinfo password are kept as they are', () => {
    const values = [
      'http://user@proxy:3128',
      'http://proxy:3128',
      'https://example.com/a:b@c',
      'https://example.com/?next=x:y@z',
      'mailto:ops@example.com',
      'user:pass@host without a scheme',
      'http://u:@h/empty-password',
      'time 10:00 @ noon',
      '',
    ];
    for (const v of values) assert.deepEqual(redactConfig({ v }), { v }, v);
  });
});
