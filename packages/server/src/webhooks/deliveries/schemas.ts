// Request and response schemas of the delivery routes, and what a user sees of a delivery.

import { type Static, Type } from 'typebox';
import type { WebhookDeliveryTable } from '../../db/index.ts';
import { BeforeParam } from '../../pagination.ts';

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

export function deliveryView(d: WebhookDeliveryTable): DeliveryView {
  return {
    id: d.id,
    endpoint_id: d.endpoint_id,
    signal_id: d.signal_id,
    state: d.state,
    attempts: d.attempts,
    next_attempt_at: d.state === 'pending' ? d.next_attempt_at : null,
    last_status: d.last_status,
    last_error: d.last_error,
    created_at: d.created_at,
    completed_at: d.completed_at,
  };
}
