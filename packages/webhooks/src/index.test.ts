import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { constructEvent, sign, verifySignature, WebhookVerificationError } from './index.ts';
import { constructEventAsync, signAsync, verifySignatureAsync } from './web.ts';

interface SignatureVector {
  name: string;
  secret: string;
  body: string;
  header: string;
  valid: boolean;
  error?: string;
}
interface EnvelopeVector {
  name: string;
  secret: string;
  body: string;
  now: string;
  valid: boolean;
  error?: string;
}
const vectors = JSON.parse(
  readFileSync(new URL('../../../testdata/webhooks/signatures.json', import.meta.url), 'utf8'),
) as {
  signatures: SignatureVector[];
  envelopes: EnvelopeVector[];
};

const failsWith = (code: string | undefined) => (e: unknown) =>
  e instanceof WebhookVerificationError && e.code === code;

describe('shared signature vectors', () => {
  for (const v of vectors.signatures) {
    test(`${v.name} (node)`, () => {
      if (v.valid) assert.doesNotThrow(() => verifySignature(v.body, v.header, v.secret));
      else assert.throws(() => verifySignature(v.body, v.header, v.secret), failsWith(v.error));
    });
    test(`${v.name} (webcrypto)`, async () => {
      if (v.valid) await verifySignatureAsync(v.body, v.header, v.secret);
      else await assert.rejects(verifySignatureAsync(v.body, v.header, v.secret), failsWith(v.error));
    });
    if (v.valid && v.header === v.header.toLowerCase() && v.header !== '')
      test(`${v.name}: sign reproduces the header`, async () => {
        assert.equal(sign(v.body, v.secret), v.header);
        assert.equal(await signAsync(v.body, v.secret), v.header);
      });
  }
});

describe('envelope vectors', () => {
  for (const v of vectors.envelopes) {
    const headers = { 'guard-signature': sign(v.body, v.secret) };
    const now = () => new Date(v.now);
    test(`${v.name} (node)`, () => {
      if (v.valid) assert.equal(constructEvent(v.body, headers, v.secret, { now }).event_type, 'signal_created');
      else assert.throws(() => constructEvent(v.body, headers, v.secret, { now }), failsWith(v.error));
    });
    test(`${v.name} (webcrypto)`, async () => {
      if (v.valid)
        assert.equal((await constructEventAsync(v.body, headers, v.secret, { now })).event_type, 'signal_created');
      else await assert.rejects(constructEventAsync(v.body, headers, v.secret, { now }), failsWith(v.error));
    });
  }
});

describe('constructEvent', () => {
  const secret = 'whsec_test';
  const envelope = JSON.parse(vectors.envelopes[0].body);
  const now = () => new Date(vectors.envelopes[0].now);
  const deliver = (doc: unknown) => {
    const body = JSON.stringify(doc);
    return { body, headers: new Headers({ 'Guard-Signature': sign(body, secret), 'Guard-Delivery': 'd1' }) };
  };

  test('returns the typed event, reading a Fetch Headers object', () => {
    const { body, headers } = deliver(envelope);
    const event = constructEvent(body, headers, secret, { now });
    assert.equal(event.data.severity, 4);
    assert.equal(event.data.signal_type, 'sudo_command_executed');
  });

  test('reads Node-style headers with any case and array values', () => {
    const { body } = deliver(envelope);
    assert.ok(constructEvent(Buffer.from(body), { 'Guard-Signature': [sign(body, secret)] }, secret, { now }));
  });

  test('accepts any of several secrets during a rotation', () => {
    const { body, headers } = deliver(envelope);
    assert.ok(constructEvent(body, headers, ['whsec_old', secret], { now }));
  });

  test('refuses parsed JSON instead of the raw body, saying so', () => {
    assert.throws(
      () => constructEvent(envelope as never, { 'guard-signature': `sha256=${'0'.repeat(64)}` }, secret),
      (e: unknown) =>
        e instanceof WebhookVerificationError && e.code === 'invalid_body' && /raw request body/.test(e.message),
    );
  });

  test('refuses other event types and versions', () => {
    for (const doc of [
      { ...envelope, event_type: 'signal_deleted' },
      { ...envelope, version: 'v2' },
    ]) {
      const { body, headers } = deliver(doc);
      assert.throws(() => constructEvent(body, headers, secret, { now }), failsWith('unsupported_event'));
    }
  });

  test('refuses an envelope with a missing or mistyped field, naming it', () => {
    const cases: [unknown, RegExp][] = [
      [{ ...envelope, data: { ...envelope.data, severity: 6 } }, /data\.severity/],
      [{ ...envelope, data: { ...envelope.data, severity: 2.5 } }, /data\.severity/],
      [{ ...envelope, data: { ...envelope.data, server_name: 7 } }, /data\.server_name/],
      [{ ...envelope, tenant_id: undefined }, /tenant_id/],
      [{ ...envelope, timestamp: 'soon' }, /timestamp/],
    ];
    for (const [doc, re] of cases) {
      const { body, headers } = deliver(doc);
      assert.throws(
        () => constructEvent(body, headers, secret, { now }),
        (e: unknown) => e instanceof WebhookVerificationError && e.code === 'invalid_payload' && re.test(e.message),
      );
    }
  });

  test('checks the signature before parsing anything', () => {
    assert.throws(
      () => constructEvent('not json', { 'guard-signature': sign('other', secret) }, secret),
      failsWith('signature_mismatch'),
    );
  });

  test('a custom tolerance widens the window', () => {
    const { body, headers } = deliver(envelope);
    const later = () => new Date(Date.parse(envelope.timestamp) + 3600_000);
    assert.throws(() => constructEvent(body, headers, secret, { now: later }), failsWith('timestamp_too_old'));
    assert.ok(constructEvent(body, headers, secret, { now: later, toleranceSeconds: 7200 }));
  });
});

test('agrees with an independent HMAC computation on random bodies', () => {
  for (let i = 0; i < 200; i++) {
    const body = Buffer.from(Array.from({ length: i * 7 }, (_, j) => (j * 31 + i) % 256));
    const secret = `whsec_${i}`;
    assert.equal(sign(body, secret), `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  }
});
