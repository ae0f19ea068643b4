// The Standard Webhooks scheme (DESIGN §5 contract — Standard Webhooks), checked against the
// `standardwebhooks` npm package, an implementation outside this SDK: what it signs, ours
// verifies, and what ours signs, it verifies; on the Node and the WebCrypto entries.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  constructEvent,
  constructGuardEvent,
  type HeaderSource,
  sign,
  signStandard,
  verifyStandardSignature,
  WebhookConfigurationError,
  WebhookVerificationError,
} from './index.ts';
import { constructEventAsync, signStandardAsync, verifyStandardSignatureAsync } from './web.ts';

const NOW = new Date('2026-11-27T12:00:00Z');
const TS = Math.floor(NOW.getTime() / 1000);
const ID = '0193a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b';
const now = () => NOW;

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
/** A secret as releases before the Standard Webhooks headers issued them: base64url, no padding. */
const legacySecret = () => {
  for (;;) {
    const s = `whsec_${randomBytes(32).toString('base64url')}`;
    if (/[-_]/.test(s.slice(6))) return s; // one that standard base64 alone would refuse
  }
};

const body = JSON.stringify({
  event_type: 'signal_created',
  version: 'v1',
  timestamp: NOW.toISOString(),
  tenant_id: 'tn_1',
  data: {
    signal_id: 'sg_1',
    signal_type: 'ssh_bruteforce',
    severity: 4,
    description: 'many failed logins — from 203.0.113.9',
    server_id: 'sv_1',
    server_name: 'web-1',
    identity_id: 'id_1',
    identity_name: 'root',
    environment: 'prod',
    created_at: NOW.toISOString(),
  },
  console_url: 'https://guard.example/console/signals/sg_1',
});

/** The headers the reference library makes for `secrets` (newest first), as a delivery carries them. */
function referenceHeaders(secrets: readonly (string | Uint8Array)[], id = ID, ts = TS): Record<string, string> {
  const signatures = secrets.map((s) =>
    (typeof s === 'string' ? new Webhook(s) : new Webhook(s, { format: 'raw' })).sign(id, new Date(ts * 1000), body),
  );
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signatures.join(' ') };
}

const rejects = (code: string) => (e: unknown) => {
  assert.ok(e instanceof WebhookVerificationError, `expected a WebhookVerificationError, got ${String(e)}`);
  assert.equal(e.code, code);
  return true;
};

describe('Standard Webhooks', () => {
  test('a secret in standard base64 verifies what the reference library signs, and the reverse', async () => {
    const secret = newSecret();
    const headers = referenceHeaders([secret]);
    verifyStandardSignature(body, headers, secret, { now });
    await verifyStandardSignatureAsync(body, headers, secret, { now });
    const ours = signStandard(ID, TS, body, secret);
    assert.equal(ours, headers['webhook-signature']);
    assert.equal(await signStandardAsync(ID, TS, body, secret), ours);
    // The reference verifies against its own clock: sign for now.
    const nowTs = Math.floor(Date.now() / 1000);
    const fresh = {
      'webhook-id': ID,
      'webhook-timestamp': String(nowTs),
      'webhook-signature': signStandard(ID, nowTs, body, secret),
    };
    assert.deepEqual(new Webhook(secret).verify(body, fresh), JSON.parse(body));
  });

  test('a secret issued earlier in base64url keys the HMAC with its base64url decoding', () => {
    const secret = legacySecret();
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64url');
    assert.equal(key.length, 32);
    const headers = referenceHeaders([new Uint8Array(key)]);
    verifyStandardSignature(body, headers, secret, { now });
    assert.equal(signStandard(ID, TS, body, secret), headers['webhook-signature']);
    // The conversion the docs show: the same key, as standard base64 a library takes as given.
    const converted = `whsec_${key.toString('base64')}`;
    verifyStandardSignature(body, referenceHeaders([converted]), secret, { now });
  });

  test('a rotation list: either secret verifies; any entry may match, newest first', () => {
    const [next, old] = [newSecret(), newSecret()];
    const headers = referenceHeaders([next, old]);
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    verifyStandardSignature(body, headers, next, { now });
    verifyStandardSignature(body, headers, old, { now });
    verifyStandardSignature(body, headers, [newSecret(), old], { now });
    assert.throws(() => verifyStandardSignature(body, headers, newSecret(), { now }), rejects('signature_mismatch'));
  });

  test('refuses a changed body, id or timestamp, a stale or future timestamp, and malformed headers', () => {
    const secret = newSecret();
    const headers = referenceHeaders([secret]);
    const verify = (h: HeaderSource, b = body) => verifyStandardSignature(b, h, secret, { now });
    assert.throws(() => verify(headers, body.replace('web-1', 'web-2')), rejects('signature_mismatch'));
    assert.throws(() => verify({ ...headers, 'webhook-id': `${ID}x` }), rejects('signature_mismatch'));
    assert.throws(() => verify({ ...headers, 'webhook-timestamp': String(TS + 1) }), rejects('signature_mismatch'));
    assert.throws(() => verify(referenceHeaders([secret], ID, TS - 301)), rejects('timestamp_too_old'));
    assert.throws(() => verify(referenceHeaders([secret], ID, TS + 301)), rejects('timestamp_in_future'));
    verify(referenceHeaders([secret], ID, TS - 300));
    assert.throws(() => verify({ ...headers, 'webhook-id': '' }), rejects('missing_signature'));
    assert.throws(() => verify({ 'webhook-id': ID, 'webhook-timestamp': String(TS) }), rejects('missing_signature'));
    assert.throws(() => verify({ ...headers, 'webhook-timestamp': '12e8' }), rejects('malformed_signature'));
    assert.throws(() => verify({ ...headers, 'webhook-signature': 'v1,not-base64' }), rejects('malformed_signature'));
    assert.throws(() => verify({ ...headers, 'webhook-signature': 'v1a,abc' }), rejects('malformed_signature'));
    const many = Array.from({ length: 9 }, () => headers['webhook-signature']).join(' ');
    assert.throws(() => verify({ ...headers, 'webhook-signature': many }), rejects('malformed_signature'));
    // Entries of other versions are skipped, not refused.
    verify({ ...headers, 'webhook-signature': `v1a,${'A'.repeat(86)}== ${headers['webhook-signature']}` });
  });

  test('a secret that is not base64 is the receiver configuration error, before the request is read', () => {
    assert.throws(
      () => verifyStandardSignature(body, {}, 'whsec_not base64!', { now }),
      (e: unknown) => e instanceof WebhookConfigurationError && e.code === 'invalid_secret',
    );
  });

  test('constructEvent takes either scheme: Guard-Signature when present, else the Standard Webhooks headers', async () => {
    const secret = newSecret();
    const standard = referenceHeaders([secret]);
    assert.equal(constructEvent(body, standard, secret, { now }).data.signal_id, 'sg_1');
    assert.equal((await constructEventAsync(body, standard, secret, { now })).data.signal_id, 'sg_1');
    assert.equal(constructGuardEvent(body, standard, secret, { now }).event_type, 'signal_created');
    const both = { ...standard, 'guard-signature': sign(body, secret) };
    assert.equal(constructEvent(body, both, secret, { now }).data.signal_id, 'sg_1');
    // A present Guard-Signature is the one checked: a wrong one is not rescued by the other scheme.
    assert.throws(
      () => constructEvent(body, { ...both, 'guard-signature': sign(body, newSecret()) }, secret, { now }),
      rejects('signature_mismatch'),
    );
    assert.throws(() => constructEvent(body, {}, secret, { now }), rejects('missing_signature'));
  });
});
