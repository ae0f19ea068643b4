// Request and response schemas of the delivery routes, and what a user sees of a delivery.

import { type Static, Type } from 'typebox';
import type { WebhookDeliveryTable } from '../../db/index.ts';
import { BeforeParam } from '../../kernel/pagination.ts';
import { deliveryStatus } from '../delivery-status.ts';

/** The console's status word (delivery-status.ts). */
export const DeliveryStatusWord = Type.Union(
  [Type.Literal('succeeded'), Type.Literal('pending'), Type.Literal('retrying'), Type.Literal('failed')],
  {
    description:
      'succeeded; pending (no attempt finished yet); retrying (an attempt failed, another is scheduled); failed (given up)',
  },
);

const AttemptView = Type.Object({
  attempt: Type.Integer(),
  started_at: Type.String(),
  duration_ms: Type.Integer(),
  status: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  response_excerpt: Type.Union([Type.String(), Type.Null()]),
});

export const DeliveryView = Type.Object({
  id: Type.String({ description: 'the Guard-Delivery header of every attempt' }),
  endpoint_id: Type.String(),
  signal_id: Type.String(),
  state: Type.String({ description: 'pending, delivering, succeeded or failed' }),
  status: DeliveryStatusWord,
  attempts: Type.Integer(),
  next_attempt_at: Type.Union([Type.String(), Type.Null()]),
  last_status: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  completed_at: Type.Union([Type.String(), Type.Null()]),
});
export type DeliveryView = Static<typeof DeliveryView>;

export const DeliveryDetail = Type.Object({ ...DeliveryView.properties, attempt_log: Type.Array(AttemptView) });

export const DeliveryListQuery = Type.Object({
  status: Type.Optional(DeliveryStatusWord),
  state: Type.Optional(
    Type.Union([
      Type.Literal('pending'),
      Type.Literal('delivering'),
      Type.Literal('succeeded'),
      Type.Literal('failed'),
    ]),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  before: Type.Optional(BeforeParam),
});
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

export const DeliveryList = Type.Object({
  deliveries: Type.Array(DeliveryView),
  next_before: Type.Union([Type.String(), Type.Null()]),
});

/** The tenant's delivery log (GET /v1/webhooks/deliveries): every endpoint's, searched. */
export const DeliveryLogQuery = Type.Object({
  signal_id: Type.Optional(Type.String({ maxLength: 64, description: 'only the deliveries of this signal or event' })),
  endpoint_id: Type.Optional(Type.String({ maxLength: 64, description: 'only the deliveries to this endpoint' })),
  status: Type.Optional(DeliveryStatusWord),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after this time' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'created before this time' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(BeforeParam),
});
export type DeliveryLogQuery = Static<typeof DeliveryLogQuery>;

export const DeliveryLogEntry = Type.Object({
  ...DeliveryView.properties,
  endpoint_name: Type.String(),
  event_type: Type.Union(
    [
      Type.Literal('signal_created'),
      Type.Literal('test'),
      Type.Literal('endpoint.failing'),
      Type.Literal('endpoint.disabled'),
      Type.Literal('endpoint.certificate_expiring'),
      Type.Literal('audit.event'),
    ],
    { description: "what it carries, as an endpoint's event_types name it (a test event is `test`)" },
  ),
});

export const DeliveryLog = Type.Object({
  deliveries: Type.Array(DeliveryLogEntry),
  next_before: Type.Union([Type.String(), Type.Null()], {
    description: 'the next page (pass it as before, with the same filters); null on the last page',
  }),
});

export function deliveryView(d: WebhookDeliveryTable): DeliveryView {
  return {
    id: d.id,
    endpoint_id: d.endpoint_id,
    signal_id: d.signal_id,
    state: d.state,
    status: deliveryStatus(d),
    attempts: d.attempts,
    next_attempt_at: d.state === 'pending' ? d.next_attempt_at : null,
    last_status: d.last_status,
    last_error: d.last_error,
    created_at: d.created_at,
    completed_at: d.completed_at,
  };
}

export const AttemptParams = Type.Object({
  id: Type.String({ maxLength: 64 }),
  n: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'the attempt number, from 1' }),
});

export const AttemptDetail = Type.Object({
  delivery_id: Type.String(),
  endpoint_id: Type.String(),
  ...AttemptView.properties,
  payload_erased: Type.Boolean({
    description: "the signal's payload was erased: the body is rebuilt from what is left, without its signature",
  }),
  response_headers: Type.Union(
    [
      Type.Object({
        headers: Type.Record(Type.String(), Type.String(), {
          description:
            'in the order received, duplicates joined by ", "; credential-like values (cookies, tokens, keys) masked',
        }),
        omitted: Type.Integer({ description: 'headers left out: at most 4 KiB are kept' }),
      }),
      Type.Null(),
    ],
    { description: "the receiver's response headers; null without a response, or for attempts before they were kept" },
  ),
  request: Type.Object(
    {
      method: Type.Literal('POST'),
      url: Type.String(),
      headers: Type.Record(Type.String(), Type.String(), {
        description:
          'with Guard-Signature as sent (every entry during a secret rotation) and traceparent when one was sent; ' +
          'custom header values masked (••••) for members',
      }),
      body: Type.String({ description: 'the exact bytes signed and sent' }),
    },
    {
      description:
        "rebuilt from the signal, the delivery and the attempt's start time (the body is deterministic for a " +
        "send time), with the signature stored as sent; the URL and custom headers are the endpoint's current ones",
    },
  ),
});

export const SignalDelivery = Type.Object({
  endpoint_id: Type.String(),
  endpoint_name: Type.String(),
  delivery_id: Type.String(),
  status: DeliveryStatusWord,
  state: Type.String(),
  attempts: Type.Integer(),
  last_status: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  completed_at: Type.Union([Type.String(), Type.Null()]),
  next_attempt_at: Type.Union([Type.String(), Type.Null()]),
});

export const SignalDeliveries = Type.Object({ deliveries: Type.Array(SignalDelivery) });
