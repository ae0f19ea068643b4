import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import {
  type ConstructEventOptions,
  constructEvent,
  constructGuardEvent,
  type HeaderSource,
  type RawBody,
  type SignalCreatedEvent,
  sign,
  verifySignature,
  WebhookConfigurationError,
  WebhookVerificationError,
} from './index.ts';
import { constructEventAsync, constructGuardEventAsync, signAsync, verifySignatureAsync } from './web.ts';

// Every expected value below comes from testdata/webhooks/signatures.json, where it is a literal
// computed outside this SDK; nothing here recomputes an HMAC to compare with.

type Secret = string | string[];
interface SignatureVector {
  name: string;
  secret: Secret;
  body?: string;
  body_hex?: string;
  header: string;
  valid: boolean;
  error?: string;
  error_class?: string;
}
interface EnvelopeVector {
  name: string;
  secret: Secret;
  body: string;
  header: string;
  now: string;
  valid: boolean;
  error?: string;
}
const vectors = JSON.parse(
  readFileSync(new URL('../../../testdata/webhooks/signatures.json', import.meta.url), 'utf8'),
) as { signatures: SignatureVector[]; envelopes: EnvelopeVector[] };

const ERROR_CLASSES: Record<string, new (...args: never[]) => Error> = {
  WebhookVerificationError,
  WebhookConfigurationError,
};

const bodyOf = (v: SignatureVector): RawBody =>
  v.body_hex === undefined ? (v.body as string) : Buffer.from(v.body_hex, 'hex');

const failsWith =
  (code: string | undefined, errorClass = 'WebhookVerificationError', message?: RegExp) =>
  (e: unknown) => {
    assert.ok(e instanceof ERROR_CLASSES[errorClass], `expected a ${errorClass}, got ${String(e)}`);
    assert.equal((e as { code?: string }).code, code);
    if (message) assert.match((e as Error).message, message);
    return true;
  };

/** The Node entry and the WebCrypto entry, both as promises, so one test body covers both. */
const ENTRIES = [
  {
    name: 'node',
    verify: async (body: RawBody, header: string | undefined, secret: Secret) => verifySignature(body, header, secret),
    construct: async (body: RawBody, headers: HeaderSource, secret: Secret, options?: ConstructEventOptions) =>
      constructEvent(body, headers, secret, options),
  },
  {
    name: 'webcrypto',
    verify: verifySignatureAsync,
    construct: constructEventAsync,
  },
] as const;

describe('shared signature vectors', () => {
  for (const v of vectors.signatures) {
    for (const entry of ENTRIES)
      test(`${v.name} (${entry.name})`, async () => {
        const run = entry.verify(bodyOf(v), v.header, v.secret);
        if (v.valid) await run;
        else await assert.rejects(run, failsWith(v.error, v.error_class));
      });
    if (v.valid && typeof v.secret === 'string' && /^sha256=[0-9a-f]{64}$/.test(v.header))
      test(`${v.name}: sign reproduces the header`, async () => {
        assert.equal(sign(bodyOf(v), v.secret as string), v.header);
        assert.equal(await signAsync(bodyOf(v), v.secret as string), v.header);
      });
  }
});

describe('envelope vectors', () => {
  for (const v of vectors.envelopes)
    for (const entry of ENTRIES)
      test(`${v.name} (${entry.name})`, async () => {
        const run = entry.construct(v.body, { 'guard-signature': v.header }, v.secret, { now: () => new Date(v.now) });
        if (v.valid) assert.equal((await run).data.signal_id, JSON.parse(v.body).data.signal_id);
        else await assert.rejects(run, failsWith(v.error));
      });
});

const fresh = vectors.envelopes.find((v) => v.name === 'fresh envelope is accepted') as EnvelopeVector;
const stale = vectors.envelopes.find((v) => v.name === 'old timestamp fails') as EnvelopeVector;
const rotation = vectors.envelopes.find(
  (v) => v.name === 'rotation list verifies and parses the envelope',
) as EnvelopeVector;

describe('configuration errors', () => {
  for (const entry of ENTRIES) {
    const deliver = (v: EnvelopeVector, secret: unknown, options: unknown) =>
      entry.construct(v.body, { 'guard-signature': v.header }, secret as Secret, options as ConstructEventOptions);

    for (const tolerance of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, '300'])
      test(`toleranceSeconds ${String(tolerance)} fails, naming the option, and does not open the replay window (${entry.name})`, async () => {
        await assert.rejects(
          deliver(stale, stale.secret, { toleranceSeconds: tolerance, now: () => new Date(stale.now) }),
          failsWith('invalid_option', 'WebhookConfigurationError', /options\.toleranceSeconds/),
        );
      });

    test(`a zero tolerance is a valid (strict) window (${entry.name})`, async () => {
      const sentAt = () => new Date(JSON.parse(fresh.body).timestamp);
      assert.ok(await deliver(fresh, fresh.secret, { toleranceSeconds: 0, now: sentAt }));
    });

    test(`a now option that is not a clock fails, naming it (${entry.name})`, async () => {
      for (const now of ['2026-11-21T10:02:00Z', () => new Date('not a date'), () => 1795262520000])
        await assert.rejects(
          deliver(stale, stale.secret, { now }),
          failsWith('invalid_option', 'WebhookConfigurationError', /options\.now/),
        );
    });

    for (const secret of [undefined, null, '', 42, [], [fresh.secret, ''], [fresh.secret, undefined]])
      test(`secret ${JSON.stringify(secret) ?? 'undefined'} fails, naming the secret (${entry.name})`, async () => {
        const check = failsWith('invalid_secret', 'WebhookConfigurationError', /secret/);
        await assert.rejects(deliver(fresh, secret, { now: () => new Date(fresh.now) }), check);
        await assert.rejects(entry.verify(fresh.body, fresh.header, secret as Secret), check);
      });

    test(`configuration is checked before the request, and is not a verification failure (${entry.name})`, async () => {
      await assert.rejects(entry.construct('not json', {}, undefined as unknown as string), (e: unknown) => {
        assert.ok(!(e instanceof WebhookVerificationError), 'a receiver must answer 5xx, not 4xx, for its own mistake');
        return failsWith('invalid_secret', 'WebhookConfigurationError', /GUARD_WEBHOOK_SECRET|not set/)(e);
      });
    });
  }
});

describe('rotation list from real headers', () => {
  const [newEntry, oldEntry] = rotation.header.split(', ');
  const now = () => new Date(rotation.now);

  test('Node-style array values are read as one list (node, webcrypto)', async () => {
    for (const entry of ENTRIES)
      assert.ok(
        await entry.construct(rotation.body, { 'Guard-Signature': [newEntry, oldEntry] }, rotation.secret, { now }),
      );
  });

  test('a Fetch Headers with the header appended twice is one list (node, webcrypto)', async () => {
    const headers = new Headers([
      ['Guard-Signature', newEntry],
      ['Guard-Signature', oldEntry],
    ]);
    for (const entry of ENTRIES) assert.ok(await entry.construct(rotation.body, headers, rotation.secret, { now }));
  });

  test('a receiver on a loopback HTTP server verifies a delivery sent with two Guard-Signature lines', async () => {
    const verdicts: string[] = [];
    const server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      for (const entry of ENTRIES)
        try {
          const event: SignalCreatedEvent = await entry.construct(Buffer.concat(chunks), req.headers, rotation.secret, {
            now,
          });
          verdicts.push(`${entry.name}:${event.data.signal_id}`);
        } catch (e) {
          verdicts.push(`${entry.name}:${(e as { code?: string }).code}`);
        }
      res.writeHead(verdicts.every((v) => v.endsWith(':sig_01')) ? 204 : 400).end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: (server.address() as AddressInfo).port,
            method: 'POST',
            path: '/guard/webhook',
            // two header lines on the wire; Node's server joins them with ", "
            headers: { 'Content-Type': 'application/json', 'Guard-Signature': [newEntry, oldEntry] },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode as number);
          },
        );
        req.on('error', reject);
        req.end(rotation.body);
      });
      assert.deepEqual(verdicts, ['node:sig_01', 'webcrypto:sig_01']);
      assert.equal(status, 204);
    } finally {
      server.close();
    }
  });
});

describe('constructEvent', () => {
  // These tests are about the envelope, not the signature (the vectors cover that), so they
  // sign their own variations of a valid envelope with sign().
  const secret = 'whsec_test';
  const envelope = JSON.parse(fresh.body);
  const now = () => new Date(fresh.now);
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
      failsWith('invalid_body', undefined, /raw request body/),
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
      assert.throws(() => constructEvent(body, headers, secret, { now }), failsWith('invalid_payload', undefined, re));
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

describe('constructGuardEvent (every event type)', () => {
  const secret = 'whsec_test';
  const signal = JSON.parse(fresh.body);
  const now = () => new Date(fresh.now);
  const about = {
    event_id: 'evt_01',
    endpoint_id: 'we_1',
    name: 'SIEM',
    url: 'https://siem.example.com/guard',
    failing_since: '2026-11-19T00:00:00.000Z',
    failure_streak: 37,
    last_error: 'HTTP 503',
  };
  const failing = {
    ...signal,
    event_type: 'endpoint.failing',
    data: { ...about, percent: 75, disable_at: '2026-11-24T00:00:00.000Z', occurred_at: '2026-11-22T18:00:00.000Z' },
    console_url: 'https://guard.example.com/console/settings/integrations/webhooks/we_1',
  };
  const disabled = {
    ...failing,
    event_type: 'endpoint.disabled',
    data: { ...about, disabled_at: '2026-11-24T00:00:01.000Z', reason: 'disabled automatically: …' },
  };
  const auditEntry = {
    ...signal,
    event_type: 'audit.event',
    data: {
      event_id: 'evt_02',
      id: 'au_1',
      at: '2026-11-21T10:00:00.000Z',
      actor_id: 'u_1',
      actor_role: 'admin',
      action: 'user.create',
      target: 'u_2',
      tenant_id: signal.tenant_id,
    },
    console_url: 'https://guard.example.com/console/support/audit',
  };
  const deliver = (doc: unknown) => {
    const body = JSON.stringify(doc);
    return { body, headers: { 'guard-signature': sign(body, secret) } };
  };

  for (const [name, construct] of [
    ['node', async (b: RawBody, h: HeaderSource) => constructGuardEvent(b, h, secret, { now })],
    ['webcrypto', (b: RawBody, h: HeaderSource) => constructGuardEventAsync(b, h, secret, { now })],
  ] as const) {
    test(`returns signals and operational events, typed by event_type (${name})`, async () => {
      const types: string[] = [];
      for (const doc of [signal, failing, disabled, auditEntry]) {
        const { body, headers } = deliver(doc);
        const event = await construct(body, headers);
        if (event.event_type === 'endpoint.failing') assert.equal(event.data.percent, 75);
        else if (event.event_type === 'endpoint.disabled') assert.match(event.data.reason, /^disabled/);
        else if (event.event_type === 'signal_created') assert.equal(event.data.severity, 4);
        else if (event.event_type === 'audit.event') assert.equal(event.data.action, 'user.create');
        types.push(event.event_type);
      }
      assert.deepEqual(types, ['signal_created', 'endpoint.failing', 'endpoint.disabled', 'audit.event']);
    });

    test(`refuses a malformed operational event, naming the field (${name})`, async () => {
      const cases: [unknown, RegExp][] = [
        [{ ...failing, data: { ...failing.data, percent: 60 } }, /data\.percent/],
        [{ ...failing, data: { ...failing.data, disable_at: undefined } }, /data\.disable_at/],
        [{ ...disabled, data: { ...disabled.data, failure_streak: '3' } }, /data\.failure_streak/],
        [{ ...failing, event_type: 'endpoint.deleted' }, /endpoint\.deleted/],
        [{ ...auditEntry, data: { ...auditEntry.data, action: 7 } }, /data\.action/],
        [{ ...auditEntry, data: { ...auditEntry.data, actor_id: undefined } }, /data\.actor_id/],
      ];
      for (const [doc, re] of cases) {
        const { body, headers } = deliver(doc);
        await assert.rejects(
          async () => construct(body, headers),
          (e: unknown) => {
            assert.ok(e instanceof WebhookVerificationError);
            assert.match(e.message, re);
            return true;
          },
        );
      }
    });
  }

  test('constructEvent still takes signal_created only, and says which function takes the others', () => {
    const { body, headers } = deliver(failing);
    assert.throws(
      () => constructEvent(body, headers, secret, { now }),
      failsWith('unsupported_event', undefined, /constructGuardEvent/),
    );
  });
});
