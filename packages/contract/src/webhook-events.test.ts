import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ENDPOINT_DEFAULTS, EVENT_TYPES } from './endpoint-rules.ts';
import { firstFault } from './schema-check.ts';
import { openApiWebhooks, WEBHOOK_EVENTS } from './webhook-events.ts';

describe('the webhook event catalog', () => {
  test('lists every event type an endpoint can subscribe to, once, with the defaults of a new endpoint', () => {
    assert.deepEqual(
      WEBHOOK_EVENTS.map((e) => e.type),
      [...EVENT_TYPES],
    );
    assert.deepEqual(
      WEBHOOK_EVENTS.filter((e) => e.byDefault).map((e) => e.type),
      [...ENDPOINT_DEFAULTS.event_types],
    );
  });

  test('every example fits its schema and names its own event_type', () => {
    for (const e of WEBHOOK_EVENTS) {
      assert.equal(
        firstFault(e.schema, e.example),
        undefined,
        `${e.type}: ${JSON.stringify(firstFault(e.schema, e.example))}`,
      );
      assert.equal(e.example.event_type, e.eventType, e.type);
    }
  });

  test('a schema refuses a body of another event, a severity out of range and a missing field', () => {
    const [signal, , failing] = WEBHOOK_EVENTS;
    assert.deepEqual(firstFault(signal.schema, failing.example)?.path, ['event_type']);
    assert.deepEqual(
      firstFault(signal.schema, { ...signal.example, data: { ...signal.example.data, severity: 6 } })?.path,
      ['data', 'severity'],
    );
    const { console_url: _, ...noUrl } = failing.example;
    assert.deepEqual(firstFault(failing.schema, noUrl)?.path, ['console_url']);
  });

  test('the OpenAPI webhooks hold one POST per event_type sent, with its examples', () => {
    const hooks = openApiWebhooks() as Record<
      string,
      { post: { requestBody: { content: Record<string, { examples: object }> } } }
    >;
    assert.deepEqual(Object.keys(hooks), [
      'signal_created',
      'endpoint.failing',
      'endpoint.disabled',
      'endpoint.certificate_expiring',
      'audit.event',
    ]);
    assert.deepEqual(Object.keys(hooks.signal_created.post.requestBody.content['application/json'].examples), [
      'signal_created',
      'test',
    ]);
  });
});
