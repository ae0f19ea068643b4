// A forward is signed as a delivery is: checked here by the receiver SDK (both schemes) and by
// the standardwebhooks npm package, as a receiver under development would check it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { constructEvent, verifyStandardSignature } from '@guard/webhooks';
import { Webhook } from 'standardwebhooks';
import { deliveryHeaders, newSessionSecret, secretProblem, stampedBody } from './delivery.ts';

const envelope = {
  event_type: 'signal_created',
  version: 'v1',
  timestamp: '2026-11-21T10:00:00.000Z',
  tenant_id: 't_1',
  data: {
    signal_id: 'sig_1',
    signal_type: 'sudo_command_executed',
    severity: 3,
    description: 'alice ran sudo',
    server_id: 'srv',
    server_name: 'web-1',
    identity_id: 'u1',
    identity_name: 'alice',
    environment: 'production',
    created_at: '2026-11-21T09:59:59.000Z',
  },
  console_url: 'https://guard.example/console/signals/sig_1',
};

describe('forwarded deliveries', () => {
  it('makes session secrets as endpoints get them: whsec_ and standard base64 of 32 bytes', () => {
    const secret = newSessionSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
    assert.notEqual(newSessionSecret(), secret);
    assert.equal(secretProblem(secret), undefined);
  });

  it('refuses a secret that cannot sign', () => {
    assert.match(secretProblem('abc') ?? '', /starts with whsec_/);
    assert.match(secretProblem('whsec_***') ?? '', /base64/);
    assert.match(secretProblem('whsec_AAAA') ?? '', /16 bytes/);
    assert.equal(secretProblem(`whsec_${Buffer.alloc(24, 7).toString('base64url')}`), undefined);
  });

  it("stamps the envelope's timestamp with the time of the forward, and leaves everything else as it came", () => {
    const at = new Date('2026-11-21T12:34:56.789Z');
    const body = stampedBody(JSON.stringify(envelope), at);
    assert.equal(body, JSON.stringify({ ...envelope, timestamp: '2026-11-21T12:34:56.789Z' }));
    assert.equal(stampedBody('not json', at), 'not json');
    assert.equal(stampedBody('[1]', at), '[1]');
  });

  it('carries the headers of a delivery, which the SDK and the standardwebhooks package verify', () => {
    const secret = newSessionSecret();
    const at = new Date();
    const body = stampedBody(JSON.stringify(envelope), at);
    const headers = deliveryHeaders(body, 'signal_created', '0190f5b4-2c9a-7a1e-8b1c-4f2d3e5a6b7c', secret, at);
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers['user-agent'], 'Guard-Webhook/1.0');
    assert.equal(headers['guard-event'], 'signal_created');
    assert.equal(headers['guard-delivery'], '0190f5b4-2c9a-7a1e-8b1c-4f2d3e5a6b7c');
    assert.equal(headers['webhook-id'], headers['guard-delivery']);
    assert.equal(headers['guard-timestamp'], String(Math.floor(at.getTime() / 1000)));
    assert.equal(headers['webhook-timestamp'], headers['guard-timestamp']);
    assert.match(headers['guard-signature'], /^sha256=[0-9a-f]{64}$/);
    assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);

    assert.equal(constructEvent(body, headers, secret).data.signal_id, 'sig_1');
    const { 'guard-signature': _, ...standardOnly } = headers;
    assert.equal(constructEvent(body, standardOnly, secret).data.signal_id, 'sig_1');
    verifyStandardSignature(body, headers, secret);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() => constructEvent(body, headers, newSessionSecret()), { code: 'signature_mismatch' });
    assert.throws(() => new Webhook(newSessionSecret()).verify(body, headers));
  });
});
