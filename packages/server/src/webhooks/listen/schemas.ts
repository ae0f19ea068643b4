// Request and response schemas of the listen routes (docs/guard-listen.md).

import { EVENT_TYPES, SIGNAL_TYPE_MAX_LENGTH, SIGNAL_TYPE_PATTERN } from '@guard/contract/endpoint-rules';
import { type Static, Type } from 'typebox';

export const ListenQuery = Type.Object({
  events: Type.Optional(
    Type.String({
      maxLength: 200,
      description: `the event types to carry, comma-separated, of ${EVENT_TYPES.join(', ')}; default all of them`,
      examples: ['signal_created,endpoint.failing'],
    }),
  ),
});

export const ListenHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      maxLength: 100,
      description:
        'resume after this event (the id of the last event received): the events since are sent first, within ' +
        'the resume window; those of the few seconds before it may come again',
    }),
  ),
});

export const ListenStreamBody = Type.String({
  description:
    'Server-Sent Events. First `ready` (data: {stream_id, tenant_id, events, resumed_from, heartbeat_seconds}); then ' +
    'one event per new event of the tenant: `id` = its id, `event` = its Guard-Event, `data` = the V1 envelope ' +
    'exactly as a delivery body; `gap` (data: {message}) when events may have been missed; `bye` (data: {reason, ' +
    'message}) before the server ends the stream; a comment every heartbeat.',
});

export const TriggerEvent = Type.Object(
  {
    event_type: Type.Literal('signal_created', { description: 'the event to make: signal_created (a test signal)' }),
    signal_type: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SIGNAL_TYPE_MAX_LENGTH,
        pattern: SIGNAL_TYPE_PATTERN,
        description: 'default test_event',
      }),
    ),
    severity: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, description: 'default 1' })),
    description: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  },
  { additionalProperties: false },
);
export type TriggerEvent = Static<typeof TriggerEvent>;

export const TriggeredEvent = Type.Object({
  signal_id: Type.String(),
  event_type: Type.Literal('signal_created'),
  received_at: Type.String(),
});
