// The exact wire format of one attempt (spec 2.6, 4.3; DESIGN §5 contract — delivery request).

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { constructEvent, sign, signStandard } from '@guard/webhooks';
import type { SignalTable } from '../db/index.ts';
import { buildAttempt, buildEnvelope, EVENT_SIGNAL_CREATED, newWebhookSecret, WEBHOOK_USER_AGENT } from './envelope.ts';

const SIGNAL: SignalTable = {
  id: 'sig_abc/def',
  tenant_id: 't_tenant1',
  agent_id: 'ag_agent1',
  server_id: 'ag_agent1',
  server_name: 'web-01.internal',
  signal_type: 'sudo_command_executed',
  severity: 3,
  description: 'alice ran "sudo -i" — ünïcödé ✓',
  identity_id: 'uid-1000',
  identity_name: 'alice',
  environment: 'production',
  created_at: '2026-11-21T09:59:58.123Z',
  received_at: '2026-11-21T09:59:59.000Z',
  is_test: 0,
  event_type: 'signal_created',
  event_data: null,
};
const SECRET = 'whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
const SENT_AT = new Date('2026-11-21T10:00:00.999Z');
const BASE = 'https://guard.example.com';
const DELIVERY = { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427' };

const attempt = (headers: Record<string, string> = {}, sentAt = SENT_AT) =>
  buildAttempt(SIGNAL, DELIVERY, { secrets: [SECRET], headers }, BASE, sentAt);

describe('V1 envelope', () => {
  it('has exactly the top-level fields of spec 2.6 with their types', () => {
    const e = buildEnvelope(SIGNAL, BASE, SENT_AT) as unknown as Record<string, unknown>;
    assert.deepEqual(Object.keys(e).sort(), ['console_url', 'data', 'event_type', 'tenant_id', 'timestamp', 'version']);
    assert.equal(e.event_type, 'signal_created');
    assert.equal(e.version, 'v1');
    assert.equal(e.timestamp, '2026-11-21T10:00:00.999Z');
    assert.equal(e.tenant_id, 't_tenant1');
    assert.equal(e.console_url, `${BASE}/console/signals/sig_abc%2Fdef`);
    assert.equal(typeof e.data, 'object');
  });

  it('has exactly the data fields of spec 2.6, severity an integer, and nothing of the stored row besides', () => {
    const { data } = buildEnvelope(SIGNAL, BASE, SENT_AT);
    assert.deepEqual(data, {
      signal_id: 'sig_abc/def',
      signal_type: 'sudo_command_executed',
      severity: 3,
      description: 'alice ran "sudo -i" — ünïcödé ✓',
      server_id: 'ag_agent1',
      server_name: 'web-01.internal',
      identity_id: 'uid-1000',
      identity_name: 'alice',
      environment: 'production',
      created_at: '2026-11-21T09:59:58.123Z',
    });
    for (const [k, v] of Object.entries(data))
      assert.equal(typeof v, k === 'severity' ? 'number' : 'string', `data.${k}`);
    assert.ok(Number.isInteger(data.severity));
  });
});

describe('one attempt', () => {
  it('sends exactly the contract headers plus the custom ones', () => {
    const { body, headers } = attempt({ Authorization: 'Bearer x', 'X-Custom': 'y' });
    assert.deepEqual(headers, {
      Authorization: 'Bearer x',
      'X-Custom': 'y',
      'content-type': 'application/json',
      'user-agent': 'Guard-Webhook/1.0',
      'guard-signature': headers['guard-signature'],
      'guard-event': 'signal_created',
      'guard-delivery': DELIVERY.id,
      'guard-timestamp': '1795255200',
      'webhook-id': DELIVERY.id,
      'webhook-timestamp': '1795255200',
      'webhook-signature': headers['webhook-signature'],
    });
    assert.equal(WEBHOOK_USER_AGENT, 'Guard-Webhook/1.0');
    assert.equal(EVENT_SIGNAL_CREATED, 'signal_created');
    assert.match(headers['guard-signature'], /^sha256=[0-9a-f]{64}$/);
    assert.match(body, /"severity":3[,}]/);
  });

  it('signs the exact body bytes: equal to the SDK sign and to an independent HMAC-SHA256 over the UTF-8 bytes', () => {
    const { body, headers } = attempt();
    assert.equal(headers['guard-signature'], sign(body, SECRET));
    const independent = createHmac('sha256', Buffer.from(SECRET, 'utf8'))
      .update(Buffer.from(body, 'utf8'))
      .digest('hex');
    assert.equal(headers['guard-signature'], `sha256=${independent}`);
  });

  it('signs the Standard Webhooks headers with the same secret: an independent HMAC over "<id>.<ts>.<body>" keyed by its base64 decoding', () => {
    const { body, headers } = attempt();
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const independent = createHmac('sha256', key).update(`${DELIVERY.id}.1795255200.${body}`, 'utf8').digest('base64');
    assert.equal(headers['webhook-signature'], `v1,${independent}`);
    const { 'guard-signature': _guardSignature, ...standardOnly } = headers;
    assert.deepEqual(constructEvent(body, standardOnly, SECRET, { now: () => SENT_AT }), JSON.parse(body));
  });

  it('parses and verifies with the SDK constructEvent', () => {
    const { body, headers } = attempt();
    const event = constructEvent(Buffer.from(body), headers, SECRET, { now: () => SENT_AT });
    assert.deepEqual(event, JSON.parse(body));
    assert.throws(() => constructEvent(body, headers, `${SECRET}x`, { now: () => SENT_AT }), /does not match/);
  });

  it('puts the send time in the body and in Guard-Timestamp: the same second, never rounded up', () => {
    for (const iso of ['2026-11-21T10:00:00.999Z', '2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00.500Z']) {
      const at = new Date(iso);
      const { body, headers } = attempt({}, at);
      const sent = JSON.parse(body).timestamp as string;
      assert.equal(sent, iso);
      assert.match(headers['guard-timestamp'], /^\d+$/);
      assert.equal(Number(headers['guard-timestamp']), Math.floor(Date.parse(sent) / 1000));
    }
  });

  it('signs every attempt afresh: a later send time changes body and signature, not Guard-Delivery', () => {
    const a = attempt({}, SENT_AT);
    const b = attempt({}, new Date(SENT_AT.getTime() + 5_000));
    assert.notEqual(a.body, b.body);
    assert.notEqual(a.headers['guard-signature'], b.headers['guard-signature']);
    assert.equal(a.headers['guard-delivery'], b.headers['guard-delivery']);
  });
});

describe('one attempt during a secret rotation (DESIGN §5 contract — rotation)', () => {
  const NEW = 'whsec_NEWnewNEWnewNEWnewNEWnewNEWnewNEWnewNEWnewNE';
  const rotating = () => buildAttempt(SIGNAL, DELIVERY, { secrets: [NEW, SECRET], headers: {} }, BASE, SENT_AT);

  it('is one entry per valid secret, newest first, separated by ", "', () => {
    const { body, headers } = rotating();
    assert.equal(headers['guard-signature'], `${sign(body, NEW)}, ${sign(body, SECRET)}`);
    assert.match(headers['guard-signature'], /^sha256=[0-9a-f]{64}, sha256=[0-9a-f]{64}$/);
    assert.equal(
      headers['webhook-signature'],
      `${signStandard(DELIVERY.id, '1795255200', body, NEW)} ${signStandard(DELIVERY.id, '1795255200', body, SECRET)}`,
    );
  });

  it('verifies with the SDK under the old secret and under the new one, and not under another', () => {
    const { body, headers } = rotating();
    for (const secret of [NEW, SECRET]) constructEvent(body, headers, secret, { now: () => SENT_AT });
    assert.throws(() => constructEvent(body, headers, `${NEW}x`, { now: () => SENT_AT }), /does not match/);
  });

  it('is exactly one sha256=<hex> with one secret: outside a rotation nothing changes', () => {
    assert.match(attempt().headers['guard-signature'], /^sha256=[0-9a-f]{64}$/);
  });

  it('carries a traceparent when one is given, and none otherwise', () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const { headers } = buildAttempt(
      SIGNAL,
      DELIVERY,
      { secrets: [SECRET], headers: {}, traceparent: tp },
      BASE,
      SENT_AT,
    );
    assert.equal(headers.traceparent, tp);
    assert.equal(attempt().headers.traceparent, undefined);
  });
});

describe('newWebhookSecret', () => {
  it('is whsec_ followed by 32 random bytes in standard base64 with padding, different every time', () => {
    const a = newWebhookSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(a.slice(6), 'base64').length, 32);
    assert.notEqual(a, newWebhookSecret());
  });
});
