// The events Guard sends to webhook endpoints (DESIGN §5, spec 2.6), written once: each one's
// JSON Schema, what it means, when it is sent and an example body. The server publishes them as
// the OpenAPI 3.1 `webhooks` of /openapi.json; the console's Event catalog shows them; tests
// check that every example fits its schema and that the envelopes the server builds do too.
// The receiver SDK's types (@guard/webhooks: SignalCreatedEvent, EndpointFailingEvent,
// EndpointDisabledEvent, EndpointCertificateExpiringEvent, AuditEvent) describe the same bodies; it has no dependency, so it cannot import
// these. Plain JSON Schema `as const`, like wire.ts.

import type { Static } from 'typebox';

const Timestamp = { type: 'string', format: 'date-time', description: 'RFC 3339 UTC timestamp' } as const;

/** The V1 envelope's fields around `data`, with the event's own `event_type` and `data`. */
function envelope<const Type extends string, const Data extends object>(eventType: Type, data: Data) {
  return {
    type: 'object',
    required: ['event_type', 'version', 'timestamp', 'tenant_id', 'data', 'console_url'],
    properties: {
      event_type: { type: 'string', const: eventType, description: 'what happened; also the Guard-Event header' },
      version: { type: 'string', const: 'v1', description: 'the envelope version' },
      timestamp: {
        ...Timestamp,
        description: 'when this attempt was sent (part of the signed body: refuse one too far from now)',
      },
      tenant_id: { type: 'string', description: 'the Guard organisation the event belongs to' },
      data,
      console_url: { type: 'string', format: 'uri', description: 'the page of the console that shows it' },
    },
  } as const;
}

export const SignalData = {
  type: 'object',
  description: 'the signal',
  required: [
    'signal_id',
    'signal_type',
    'severity',
    'description',
    'server_id',
    'server_name',
    'identity_id',
    'identity_name',
    'environment',
    'created_at',
  ],
  properties: {
    signal_id: { type: 'string', description: 'unique per signal: deduplicate on it (delivery is at least once)' },
    signal_type: {
      type: 'string',
      description: 'what the agent saw, e.g. sudo_command_executed; test_event for a test',
    },
    severity: { type: 'integer', minimum: 1, maximum: 5, description: '1 info, 2 low, 3 medium, 4 high, 5 critical' },
    description: { type: 'string', description: 'one line for people' },
    server_id: { type: 'string', description: 'the server (agent) that reported it' },
    server_name: { type: 'string', description: "the server's hostname" },
    identity_id: { type: 'string', description: 'who or what acted (a user, a process)' },
    identity_name: { type: 'string', description: 'its name, e.g. the user name' },
    environment: { type: 'string', description: "the server's environment, e.g. production" },
    created_at: { ...Timestamp, description: 'when the agent saw it' },
  },
} as const;

const EndpointEventFields = {
  event_id: {
    type: 'string',
    description: 'unique per event: deduplicate on it (it is signed, unlike Guard-Delivery)',
  },
  endpoint_id: { type: 'string', description: 'the endpoint the event is about (never the one receiving it)' },
  name: { type: 'string', description: "the endpoint's name" },
  url: { type: 'string', description: "the endpoint URL's origin (scheme, host, port): never its path or query" },
  failing_since: { ...Timestamp, description: 'when its current run of failed attempts began' },
  failure_streak: { type: 'integer', minimum: 0, description: 'failed attempts in a row so far' },
  last_error: { type: 'string', description: "the last attempt's error, as the attempt log shows it" },
} as const;
const ENDPOINT_EVENT_REQUIRED = [
  'event_id',
  'endpoint_id',
  'name',
  'url',
  'failing_since',
  'failure_streak',
  'last_error',
] as const;

export const SignalCreatedEvent = envelope('signal_created', SignalData);
export type SignalCreatedEvent = Static<typeof SignalCreatedEvent>;

export const EndpointFailingEvent = envelope('endpoint.failing', {
  type: 'object',
  description: 'the endpoint that is failing',
  required: [...ENDPOINT_EVENT_REQUIRED, 'percent', 'disable_at', 'occurred_at'],
  properties: {
    ...EndpointEventFields,
    percent: { type: 'integer', enum: [50, 75, 90], description: 'how much of the disable window it has failed for' },
    disable_at: { ...Timestamp, description: 'when Guard disables it unless an attempt succeeds before' },
    occurred_at: { ...Timestamp, description: 'when the threshold was crossed' },
  },
} as const);
export type EndpointFailingEvent = Static<typeof EndpointFailingEvent>;

export const EndpointDisabledEvent = envelope('endpoint.disabled', {
  type: 'object',
  description: 'the endpoint that was disabled',
  required: [...ENDPOINT_EVENT_REQUIRED, 'disabled_at', 'reason'],
  properties: {
    ...EndpointEventFields,
    disabled_at: { ...Timestamp, description: 'when Guard disabled it' },
    reason: { type: 'string', description: 'why, in the words the endpoint view shows' },
  },
} as const);
export type EndpointDisabledEvent = Static<typeof EndpointDisabledEvent>;

export const EndpointCertificateExpiringEvent = envelope('endpoint.certificate_expiring', {
  type: 'object',
  description: 'the endpoint whose client certificate (mTLS) expires soon',
  required: [
    'event_id',
    'endpoint_id',
    'name',
    'url',
    'certificate_subject',
    'not_after',
    'days_left',
    'threshold_days',
  ],
  properties: {
    event_id: EndpointEventFields.event_id,
    endpoint_id: {
      type: 'string',
      description: 'the endpoint whose certificate it is (it may be the one receiving this)',
    },
    name: EndpointEventFields.name,
    url: EndpointEventFields.url,
    certificate_subject: {
      type: 'string',
      description: "the certificate's subject, e.g. O=Acme, CN=guard.acme.example",
    },
    not_after: { ...Timestamp, description: 'when the certificate expires' },
    days_left: { type: 'integer', description: 'whole days left then (0 on its last day)' },
    threshold_days: { type: 'integer', enum: [30, 7, 1], description: 'the threshold crossed: 30, 7 or 1 days before' },
  },
} as const);
export type EndpointCertificateExpiringEvent = Static<typeof EndpointCertificateExpiringEvent>;

export const AuditEventData = {
  type: 'object',
  description: 'the audit log entry, as GET /v1/audit shows it (without the email)',
  required: ['event_id', 'id', 'at', 'actor_id', 'actor_role', 'action', 'target', 'tenant_id'],
  properties: {
    event_id: {
      type: 'string',
      description: 'unique per event: deduplicate on it (it is signed, unlike Guard-Delivery)',
    },
    id: { type: 'string', description: "the entry's id in the audit log" },
    at: { ...Timestamp, description: 'when it happened' },
    actor_id: {
      type: 'string',
      description:
        'who did it: a user id, or a machine such as guard (the delivery machinery), sso:oidc, scim:<token id>',
    },
    actor_role: { type: 'string', description: "admin, member, support, or the machine's own: system, sso, scim" },
    action: { type: 'string', description: 'what was done, e.g. user.create, bundle.show, tenant.settings' },
    target: { type: 'string', description: 'the id read or changed' },
    tenant_id: { type: 'string', description: 'the organisation it belongs to (the envelope says it too)' },
  },
} as const;

export const AuditEvent = envelope('audit.event', AuditEventData);
export type AuditEvent = Static<typeof AuditEvent>;

const TENANT = 't_Qm3v9XkPZr2LwN8aTt4b';
const CONSOLE = 'https://guard.example.com/console';
const ENDPOINT_ID = 'we_Hc7Rk2pVx9LmQa4sZt1e';

const signalExample = {
  event_type: 'signal_created',
  version: 'v1',
  timestamp: '2026-11-21T10:00:02.184Z',
  tenant_id: TENANT,
  data: {
    signal_id: 'sig_0193a5b3d1e27f408a9b0c1d2e3f4a5b',
    signal_type: 'sudo_command_executed',
    severity: 4,
    description: 'alice ran sudo /usr/bin/systemctl stop auditd',
    server_id: 'ag_N4pLx8vRk2QmZa7cWt3y',
    server_name: 'web-01.acme.example',
    identity_id: 'uid:1001',
    identity_name: 'alice',
    environment: 'production',
    created_at: '2026-11-21T10:00:01.000Z',
  },
  console_url: `${CONSOLE}/signals/sig_0193a5b3d1e27f408a9b0c1d2e3f4a5b`,
} as const satisfies SignalCreatedEvent;

const testExample = {
  ...signalExample,
  data: {
    signal_id: 'sig_0193a5b4e2f37f408a9b0c1d2e3f4a5b',
    signal_type: 'test_event',
    severity: 1,
    description: 'Test event for endpoint "SIEM ingest", sent by admin@acme.example',
    server_id: 'test',
    server_name: 'guard-test-event',
    identity_id: 'u_Jp2Wq8Lm4Xv7Rk9aSd3f',
    identity_name: 'admin@acme.example',
    environment: 'test',
    created_at: '2026-11-21T10:05:00.000Z',
  },
  timestamp: '2026-11-21T10:05:00.412Z',
  console_url: `${CONSOLE}/signals/sig_0193a5b4e2f37f408a9b0c1d2e3f4a5b`,
} as const satisfies SignalCreatedEvent;

const endpointData = {
  event_id: 'evt_0193a5c0a1b27f408a9b0c1d2e3f4a5b',
  endpoint_id: ENDPOINT_ID,
  name: 'SIEM ingest',
  url: 'https://siem.acme.example',
  failing_since: '2026-11-21T06:00:00.000Z',
  failure_streak: 14,
  last_error: 'HTTP 503',
} as const;

const failingExample = {
  event_type: 'endpoint.failing',
  version: 'v1',
  timestamp: '2026-11-21T16:00:03.020Z',
  tenant_id: TENANT,
  data: {
    ...endpointData,
    percent: 50,
    disable_at: '2026-11-22T06:00:00.000Z',
    occurred_at: '2026-11-21T16:00:03.000Z',
  },
  console_url: `${CONSOLE}/settings/integrations/webhooks/${ENDPOINT_ID}`,
} as const satisfies EndpointFailingEvent;

const disabledExample = {
  event_type: 'endpoint.disabled',
  version: 'v1',
  timestamp: '2026-11-22T06:00:04.020Z',
  tenant_id: TENANT,
  data: {
    ...endpointData,
    event_id: 'evt_0193a8d0b2c37f408a9b0c1d2e3f4a5b',
    failure_streak: 31,
    disabled_at: '2026-11-22T06:00:04.000Z',
    reason: 'disabled automatically: every delivery attempt failed since 2026-11-21T06:00:00.000Z (last: HTTP 503)',
  },
  console_url: `${CONSOLE}/settings/integrations/webhooks/${ENDPOINT_ID}`,
} as const satisfies EndpointDisabledEvent;

const certificateExample = {
  event_type: 'endpoint.certificate_expiring',
  version: 'v1',
  timestamp: '2026-11-23T03:00:00.318Z',
  tenant_id: TENANT,
  data: {
    event_id: 'evt_0193b1f2c3d47f408a9b0c1d2e3f4a5b',
    endpoint_id: ENDPOINT_ID,
    name: 'SIEM ingest',
    url: 'https://siem.acme.example',
    certificate_subject: 'O=Acme Robotics, CN=guard-deliveries.acme.example',
    not_after: '2026-11-30T00:00:00.000Z',
    days_left: 6,
    threshold_days: 7,
  },
  console_url: `${CONSOLE}/settings/integrations/webhooks/${ENDPOINT_ID}`,
} as const satisfies EndpointCertificateExpiringEvent;

const auditExample = {
  event_type: 'audit.event',
  version: 'v1',
  timestamp: '2026-11-21T10:01:00.530Z',
  tenant_id: TENANT,
  data: {
    event_id: 'evt_0193a5b4c0de7a3c9b1e2f3a4b5c6d7e',
    id: 'au_Vb8nQ2xKp4LmRz7aWc3t',
    at: '2026-11-21T10:00:41.000Z',
    actor_id: 'u_Jp2Wq8Lm4Xv7Rk9aSd3f',
    actor_role: 'admin',
    action: 'user.create',
    target: 'u_Xr5Tn1Qw8Kp3Lm6aZc9v',
    tenant_id: TENANT,
  },
  console_url: `${CONSOLE}/support/audit`,
} as const satisfies AuditEvent;

/** One entry of the catalog: a subscription an endpoint can choose (event_types), and what it receives. */
export interface WebhookEventEntry {
  /** The name in an endpoint's event_types. */
  type:
    | 'signal_created'
    | 'test'
    | 'endpoint.failing'
    | 'endpoint.disabled'
    | 'endpoint.certificate_expiring'
    | 'audit.event';
  /** The body's event_type and the Guard-Event header (a test event is a signal_created). */
  eventType:
    | 'signal_created'
    | 'endpoint.failing'
    | 'endpoint.disabled'
    | 'endpoint.certificate_expiring'
    | 'audit.event';
  title: string;
  /** When Guard sends it, for people. */
  summary: string;
  /** Whether a new endpoint receives it unless told otherwise. */
  byDefault: boolean;
  schema:
    | typeof SignalCreatedEvent
    | typeof EndpointFailingEvent
    | typeof EndpointDisabledEvent
    | typeof EndpointCertificateExpiringEvent
    | typeof AuditEvent;
  example:
    | SignalCreatedEvent
    | EndpointFailingEvent
    | EndpointDisabledEvent
    | EndpointCertificateExpiringEvent
    | AuditEvent;
}

/** Every event Guard sends, in the order the console lists them. */
export const WEBHOOK_EVENTS: readonly WebhookEventEntry[] = [
  {
    type: 'signal_created',
    eventType: 'signal_created',
    title: 'Signal created',
    summary:
      'An agent reported a security signal. Sent to every enabled endpoint that subscribes to it and whose minimum severity and signal types it passes, once per endpoint (retried until it succeeds or the schedule ends).',
    byDefault: true,
    schema: SignalCreatedEvent,
    example: signalExample,
  },
  {
    type: 'test',
    eventType: 'signal_created',
    title: 'Test event',
    summary:
      'An admin pressed Send test event (or a secret rotation sent its proof). The body is a signal_created with signal_type test_event, severity 1 and server_id test, sent to that one endpoint only; it never appears in the signal list, and its failure never marks the endpoint as failing.',
    byDefault: true,
    schema: SignalCreatedEvent,
    example: testExample,
  },
  {
    type: 'endpoint.failing',
    eventType: 'endpoint.failing',
    title: 'Endpoint failing',
    summary:
      'Another endpoint of your organisation has failed without a break for 50 %, 75 % or 90 % of the window after which Guard disables it (once each per failing streak). Sent to the other enabled endpoints that subscribe to it; opt-in.',
    byDefault: false,
    schema: EndpointFailingEvent,
    example: failingExample,
  },
  {
    type: 'endpoint.disabled',
    eventType: 'endpoint.disabled',
    title: 'Endpoint disabled',
    summary:
      'Guard disabled another endpoint of your organisation after it failed for the whole window. Sent to the other enabled endpoints that subscribe to it; opt-in.',
    byDefault: false,
    schema: EndpointDisabledEvent,
    example: disabledExample,
  },
  {
    type: 'endpoint.certificate_expiring',
    eventType: 'endpoint.certificate_expiring',
    title: 'Client certificate expiring',
    summary:
      "An endpoint's client certificate (mTLS) expires soon: sent 30, 7 and 1 days before, once each per certificate, to every enabled endpoint of your organisation that subscribes to it, that endpoint included (it still works). Give the endpoint a renewed certificate before then; opt-in.",
    byDefault: false,
    schema: EndpointCertificateExpiringEvent,
    example: certificateExample,
  },
  {
    type: 'audit.event',
    eventType: 'audit.event',
    title: 'Audit log entry',
    summary:
      "An entry was written to your organisation's audit log (who read or changed what: users, settings, endpoints, bundles, exports). Sent to every enabled endpoint that subscribes to it, within a maintenance interval (--gc-interval, a minute by default) of the entry, so a SIEM receives the audit trail like signals; opt-in.",
    byDefault: false,
    schema: AuditEvent,
    example: auditExample,
  },
];

/** The request headers of every delivery (DESIGN §5), for the OpenAPI document. */
const DELIVERY_HEADERS = [
  [
    'Guard-Signature',
    'sha256=<hex HMAC-SHA256 of the raw body, keyed with the secret>; during a rotation one entry per valid secret, newest first, separated by ", "',
  ],
  ['Guard-Event', 'the event_type of the body'],
  ['Guard-Delivery', 'a UUID, the same for every attempt of one delivery: deduplicate on it'],
  ['Guard-Timestamp', 'Unix seconds when the attempt was sent (the body carries the same time)'],
  ['webhook-id', 'Standard Webhooks: the same as Guard-Delivery'],
  ['webhook-timestamp', 'Standard Webhooks: the same as Guard-Timestamp'],
  [
    'webhook-signature',
    'Standard Webhooks: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">, space-separated during a rotation',
  ],
] as const;

/**
 * The OpenAPI 3.1 `webhooks` object: one POST per event_type that Guard sends, with its headers,
 * body schema and example(s). A receiver answers any 2xx within 15 s; anything else is retried.
 */
export function openApiWebhooks(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const eventType of [
    'signal_created',
    'endpoint.failing',
    'endpoint.disabled',
    'endpoint.certificate_expiring',
    'audit.event',
  ] as const) {
    const entries = WEBHOOK_EVENTS.filter((e) => e.eventType === eventType);
    const [first] = entries;
    out[eventType] = {
      post: {
        summary: first.title,
        description: entries.map((e) => `**${e.type}** (${e.title}): ${e.summary}`).join('\n\n'),
        operationId: `webhook_${eventType.replace('.', '_')}`,
        tags: ['webhook events'],
        parameters: DELIVERY_HEADERS.map(([name, description]) => ({
          name,
          in: 'header',
          required: true,
          description,
          schema: { type: 'string' },
        })),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: first.schema,
              examples: Object.fromEntries(entries.map((e) => [e.type, { summary: e.title, value: e.example }])),
            },
          },
        },
        responses: {
          '2XX': { description: 'received: any 2xx within 15 s ends the delivery' },
          default: {
            description:
              'anything else (a 3xx too: redirects are not followed), or no answer in 15 s, is retried with backoff; 410 Gone disables the endpoint',
          },
        },
      },
    };
  }
  return out;
}
