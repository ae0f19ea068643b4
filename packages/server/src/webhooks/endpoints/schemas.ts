// Request and response schemas of the endpoint routes, and what a user sees of an endpoint.

import { type Static, Type } from 'typebox';
import type { Role, WebhookDeliveryTable, WebhookEndpointTable } from '../../db/index.ts';
import { DeliveryStatusWord } from '../deliveries/schemas.ts';
import { deliveryStatus } from '../delivery-status.ts';
import { AUTH_TEXT_MAX_LENGTH, authView, type EndpointAuth } from '../endpoint-auth.ts';
import { MASKED_HEADER_VALUE, maskHeaders, maskUrl } from '../endpoint-headers.ts';
import { type EndpointHealthView, EndpointHealthView as HealthSchema } from '../endpoint-health.ts';
import {
  HEADERS_MAX_COUNT,
  NAME_MAX_LENGTH,
  RATE_LIMIT_MAX,
  RATE_LIMIT_MIN,
  SIGNAL_TYPE_MAX_LENGTH,
  SIGNAL_TYPE_PATTERN,
  SIGNAL_TYPES_MAX_COUNT,
  URL_MAX_LENGTH,
} from '../endpoint-rules.ts';
import { TLS_PEM_MAX_LENGTH, tlsView } from '../endpoint-tls.ts';
import { GRACE_SECONDS_DEFAULT, GRACE_SECONDS_MAX } from '../secret-rotation.ts';
import { DEFAULT_EVENT_TYPES, EVENT_TYPES, type EventType, typesOf } from '../subscriptions.ts';

const Headers = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 4096 }), {
  maxProperties: HEADERS_MAX_COUNT,
  description: 'custom headers sent with every delivery',
});

const EventTypes = Type.Array(Type.Union(EVENT_TYPES.map((t) => Type.Literal(t))), {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  description: `the event types delivered to it; default ${JSON.stringify(DEFAULT_EVENT_TYPES)} (the operational events endpoint.failing and endpoint.disabled are opt-in)`,
});
const MinSeverity = Type.Integer({
  minimum: 1,
  maximum: 5,
  description: 'signals below this severity are not delivered to it; default 1 (all)',
});
const SignalTypes = Type.Union(
  [
    Type.Array(Type.String({ minLength: 1, maxLength: SIGNAL_TYPE_MAX_LENGTH, pattern: SIGNAL_TYPE_PATTERN }), {
      minItems: 1,
      maxItems: SIGNAL_TYPES_MAX_COUNT,
      uniqueItems: true,
    }),
    Type.Null(),
  ],
  { description: 'only signals of these types are delivered to it; null (the default): every type' },
);
const RateLimit = Type.Union([Type.Number({ minimum: RATE_LIMIT_MIN, maximum: RATE_LIMIT_MAX }), Type.Null()], {
  description:
    'deliveries per second at most (fractions allowed: 0.5 is one every 2 s); deliveries beyond it wait, none fails for it; null (the default): no limit',
});

const Pem = (description: string) =>
  Type.Union([Type.String({ minLength: 1, maxLength: TLS_PEM_MAX_LENGTH }), Type.Null()], { description });

const AuthText = Type.String({ minLength: 1, maxLength: AUTH_TEXT_MAX_LENGTH });
const AuthInput = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('basic'),
        username: Type.String({ maxLength: AUTH_TEXT_MAX_LENGTH }),
        password: Type.Optional(Type.String({ maxLength: AUTH_TEXT_MAX_LENGTH, description: 'kept when left out' })),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('oauth2_client_credentials'),
        token_url: Type.String({ minLength: 1, maxLength: URL_MAX_LENGTH }),
        client_id: AuthText,
        client_secret: Type.Optional({ ...AuthText, description: 'kept when left out' }),
        scope: Type.Optional(Type.Union([AuthText, Type.Null()])),
        audience: Type.Optional(Type.Union([AuthText, Type.Null()])),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  {
    description:
      'how each delivery authenticates to the receiver: HTTP Basic, or an OAuth2 access token got with the client credentials grant from token_url; null: none. The password and client secret are stored sealed and never returned',
  },
);

/** TLS and authentication towards the receiver, optional on create and edit (DESIGN §5 contract — endpoint TLS). */
const Transport = {
  tls_client_certificate: Type.Optional(
    Pem(
      'client certificate (PEM, leaf first, then intermediates) presented when the receiver asks for one (mTLS); null removes it with its key',
    ),
  ),
  tls_client_key: Type.Optional(
    Pem("the client certificate's private key (unencrypted PEM); stored sealed, never returned"),
  ),
  tls_ca_certificates: Type.Optional(
    Pem(
      "CA certificates (PEM bundle): the receiver's certificate must chain to one of these instead of the system store; null: the system store",
    ),
  ),
  auth: Type.Optional(AuthInput),
};

/** The subscription and rate-limit fields, optional on create and edit (DESIGN §5 stays compatible). */
const Subscription = {
  event_types: Type.Optional(EventTypes),
  min_severity: Type.Optional(MinSeverity),
  signal_types: Type.Optional(SignalTypes),
  rate_limit: Type.Optional(RateLimit),
};

export const CreateEndpoint = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH }),
    url: Type.String({ minLength: 1, maxLength: URL_MAX_LENGTH }),
    headers: Type.Optional(Headers),
    ...Subscription,
    ...Transport,
  },
  { additionalProperties: false },
);
export type CreateEndpoint = Static<typeof CreateEndpoint>;

export const UpdateEndpoint = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: URL_MAX_LENGTH })),
    headers: Type.Optional(Headers),
    enabled: Type.Optional(Type.Boolean()),
    ...Subscription,
    ...Transport,
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateEndpoint = Static<typeof UpdateEndpoint>;

const RotationView = Type.Union(
  [
    Type.Object({
      started_at: Type.String(),
      grace_ends_at: Type.String({ description: 'until then deliveries are signed with the new and the old secret' }),
      proof: Type.Union(
        [
          Type.Object({
            signal_id: Type.String(),
            delivery_id: Type.Union([Type.String(), Type.Null()]),
            status: Type.Union([DeliveryStatusWord, Type.Null()]),
          }),
          Type.Null(),
        ],
        { description: 'the test event signed with the new secret alone, once sent' },
      ),
      can_complete: Type.Boolean({
        description: 'the receiver answered the proof with a 2xx: the grace period may be ended early',
      }),
    }),
    Type.Null(),
  ],
  { description: 'the secret rotation in its grace period, or null' },
);
export type RotationView = Static<typeof RotationView>;

const CertificateSummaryView = Type.Object({
  subject: Type.String(),
  issuer: Type.String(),
  not_before: Type.String(),
  not_after: Type.String({
    description: 'when it expires: Guard announces endpoint.certificate_expiring 30 and 7 days before',
  }),
  fingerprint_sha256: Type.String(),
});

export const EndpointView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  headers: Type.Record(Type.String(), Type.String(), {
    description: `custom headers; members read every value as "${MASKED_HEADER_VALUE}", admins the real value`,
  }),
  enabled: Type.Boolean(),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  failing_since: Type.Union([Type.String(), Type.Null()]),
  event_types: Type.Array(Type.String(), { description: 'the event types delivered to it' }),
  min_severity: Type.Integer(),
  signal_types: Type.Union([Type.Array(Type.String()), Type.Null()]),
  rate_limit: Type.Union([Type.Number(), Type.Null()], { description: 'deliveries per second at most, or null' }),
  health: HealthSchema,
  last_delivery: Type.Union(
    [
      Type.Object({
        id: Type.String(),
        status: DeliveryStatusWord,
        at: Type.String({ description: 'when it completed, or, while it is open, when it was created' }),
        last_status: Type.Union([Type.Integer(), Type.Null()]),
      }),
      Type.Null(),
    ],
    { description: "the endpoint's newest delivery, or null before the first" },
  ),
  rotation: RotationView,
  tls: Type.Object(
    {
      client_certificate: Type.Union([CertificateSummaryView, Type.Null()], {
        description: 'the client certificate presented for mTLS (its key is never shown), or null',
      }),
      ca_certificates: Type.Union(
        [Type.Object({ count: Type.Integer(), subjects: Type.Array(Type.String()) }), Type.Null()],
        { description: 'the CA bundle that replaces the system store for this receiver, or null' },
      ),
    },
    { description: 'TLS towards the receiver (DESIGN §5 contract — endpoint TLS)' },
  ),
  auth: Type.Union(
    [
      Type.Object({ type: Type.Literal('basic'), username: Type.String() }),
      Type.Object({
        type: Type.Literal('oauth2_client_credentials'),
        token_url: Type.String({ description: 'query values masked for members' }),
        client_id: Type.String(),
        scope: Type.Union([Type.String(), Type.Null()]),
        audience: Type.Union([Type.String(), Type.Null()]),
      }),
      Type.Null(),
    ],
    { description: 'how deliveries authenticate to the receiver (never the password or client secret), or null' },
  ),
  secret_rotated_at: Type.Union([Type.String(), Type.Null()], {
    description: 'when the current secret replaced the one before (null: the secret made with the endpoint)',
  }),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type EndpointView = Static<typeof EndpointView>;

export const CreatedEndpoint = Type.Object({
  ...EndpointView.properties,
  secret: Type.String({ description: 'whsec_…: shown once, never again' }),
});

export const EndpointList = Type.Object({ endpoints: Type.Array(EndpointView) });

export const TestEventSent = Type.Object({ signal_id: Type.String(), delivery_id: Type.String() });

export const RotateSecret = Type.Object(
  {
    grace_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: GRACE_SECONDS_MAX,
        default: GRACE_SECONDS_DEFAULT,
        description: 'how long the old secret stays valid beside the new one; 0 drops it at once',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RotateSecret = Static<typeof RotateSecret>;

export const RotatedSecret = Type.Object({
  ...EndpointView.properties,
  secret: Type.String({ description: 'the new whsec_… secret: shown once, never again' }),
});

/** `headers` and the URL's query values are the real ones for an admin, masked for anyone else. */
export function endpointView(
  e: WebhookEndpointTable,
  headers: Record<string, string>,
  role: Role,
  newest: WebhookDeliveryTable | undefined,
  health: EndpointHealthView,
  rotation: RotationView = null,
  auth: EndpointAuth | null = null,
): EndpointView {
  return {
    id: e.id,
    name: e.name,
    url: role === 'admin' ? e.url : maskUrl(e.url),
    headers: role === 'admin' ? headers : maskHeaders(headers),
    enabled: e.enabled === 1,
    disabled_reason: e.disabled_reason,
    failing_since: e.failing_since,
    event_types: typesOf(e.event_mask) satisfies EventType[],
    min_severity: e.min_severity,
    signal_types: e.signal_types === null ? null : (JSON.parse(e.signal_types) as string[]),
    rate_limit: e.rate_limit,
    health,
    last_delivery: newest
      ? {
          id: newest.id,
          status: deliveryStatus(newest),
          at: newest.completed_at ?? newest.created_at,
          last_status: newest.last_status,
        }
      : null,
    rotation,
    tls: tlsView(e),
    auth: authView(auth, role === 'admin'),
    secret_rotated_at: e.rotation_started_at ?? null,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}
