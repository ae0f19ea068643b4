import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactConfig } from './redact-config.ts';

test('removes identity and credential keys and keeps the rest as they are', () => {
  const effective = {
    log_path: '/var/log/guard/agent.log',
    state_dir: '/var/lib/guard',
    environment: 'production',
    tenant_id: 't_123',
    agent_id: 'a_1',
    hostname: 'web-01',
    host_id: 'h_1',
    api_key: 'gk_live',
    enroll_token: 'et_1',
    proxy: { https: 'http://proxy:3128', auth_token: 'x' },
    probes: [{ name: 'exec', client_secret: 's', interval_s: 5 }],
    tags: ['a', 'b'],
    retries: 3,
    enabled: true,
    nothing: null,
  };
  assert.deepEqual(redactConfig(effective), {
    log_path: '/var/log/guard/agent.log',
    state_dir: '/var/lib/guard',
    environment: 'production',
    proxy: { https: 'http://proxy:3128' },
    probes: [{ name: 'exec', interval_s: 5 }],
    tags: ['a', 'b'],
    retries: 3,
    enabled: true,
    nothing: null,
  });
});

test('removes keys matching the redaction pattern at any depth, including dotted keys', () => {
  const out = redactConfig({ a: { b: { c: { 'req.api_key': 1, deep_secret: 2, keep: 3 } } } });
  assert.deepEqual(out, { a: { b: { c: { keep: 3 } } } });
});

test('keeps keys that only resemble the pattern', () => {
  const cfg = { token: 1, secret: 2, api_keys: 3, tokens_total: 4, API_KEY: 5 };
  assert.deepEqual(redactConfig(cfg), cfg);
});
