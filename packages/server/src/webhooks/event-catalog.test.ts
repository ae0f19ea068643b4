// The bodies the server builds fit the event catalog's schemas (@guard/contract/webhook-events),
// which /openapi.json publishes as its `webhooks` and the console's Event catalog shows: a
// signal, a test event and both operational events, as buildEnvelope makes them for an attempt.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { firstFault } from '@guard/contract/schema-check';
import { WEBHOOK_EVENTS } from '@guard/contract/webhook-events';
import type { SignalTable } from '../db/index.ts';
import { buildEnvelope } from './envelope.ts';
import { disabledEvent, type EventEndpoint, failingEvent } from './operational-events.ts';
import { eventTypeOf } from './subscriptions.ts';

const AT = '2026-11-21T10:00:00.000Z';
const BASE = 'https://guard.example.com';

const signal: SignalTable = {
  id: 'sig_1',
  tenant_id: 't_1',
  agent_id: 'ag_1',
  server_id: 'ag_1',
  server_name: 'web-01',
  signal_type: 'sudo_command_executed',
  severity: 4,
  description: 'alice ran sudo',
  identity_id: 'uid:1001',
  identity_name: 'alice',
  environment: 'production',
  created_at: AT,
  received_at: AT,
  is_test: 0,
  event_type: 'signal_created',
  event_data: null,
};
const testSignal: SignalTable = {
  ...signal,
  id: 'sig_2',
  agent_id: null,
  server_id: 'test',
  signal_type: 'test_event',
  severity: 1,
  is_test: 1,
};
const endpoint: EventEndpoint = {
  id: 'we_1',
  tenant_id: 't_1',
  name: 'SIEM',
  url: 'https://siem.example.com/hook?token=x',
  failing_since: '2026-11-21T06:00:00.000Z',
  failure_streak: 9,
};
const rows = [
  signal,
  testSignal,
  failingEvent(
    endpoint,
    { percent: 75, failingSince: endpoint.failing_since as string, disableAt: '2026-11-22T06:00:00.000Z', at: AT },
    'HTTP 503',
    AT,
  ),
  disabledEvent(endpoint, 'disabled automatically', 'HTTP 503', AT),
];

describe('the envelopes the server sends fit the event catalog', () => {
  for (const row of rows) {
    const type = eventTypeOf(row);
    test(`${type}`, () => {
      const entry = WEBHOOK_EVENTS.find((e) => e.type === type);
      assert.ok(entry, `${type} is in the catalog`);
      const body = JSON.parse(JSON.stringify(buildEnvelope(row, BASE, new Date(AT))));
      assert.equal(firstFault(entry.schema, body), undefined, JSON.stringify(firstFault(entry.schema, body)));
      assert.equal(body.event_type, entry.eventType);
    });
  }
});
