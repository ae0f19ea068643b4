// Request and response schemas of the signal routes, and the view of a stored signal.

import { SIGNAL_TYPE_MAX_LENGTH, SIGNAL_TYPE_PATTERN } from '@guard/contract/endpoint-rules';
import { type Static, Type } from 'typebox';
import type { SignalTable } from '../db/index.ts';
import { BeforeParam } from '../kernel/pagination.ts';

export const CreateSignal = Type.Object(
  {
    signal_type: Type.String({
      minLength: 1,
      maxLength: SIGNAL_TYPE_MAX_LENGTH,
      pattern: SIGNAL_TYPE_PATTERN,
      examples: ['sudo_command_executed'],
    }),
    severity: Type.Integer({ minimum: 1, maximum: 5, description: '1 (info) to 5 (critical)' }),
    description: Type.String({ minLength: 1, maxLength: 4096 }),
    identity_id: Type.String({ maxLength: 200 }),
    identity_name: Type.String({ maxLength: 200 }),
    environment: Type.Optional(Type.String({ maxLength: 100, description: "defaults to the agent's environment tag" })),
    created_at: Type.Optional(Type.String({ format: 'date-time', description: 'defaults to the time received' })),
  },
  { additionalProperties: false },
);
export type CreateSignal = Static<typeof CreateSignal>;

export const CreatedSignal = Type.Object({ signal_id: Type.String(), deliveries: Type.Integer() });

/** The most signals one batch may carry: what one group commit of the outbox takes (outbox.ts). */
export const SIGNAL_BATCH_MAX = 256;

/** A batch: each signal with its own idempotency key (the header's, per signal). */
export const CreateSignalBatch = Type.Array(
  Type.Object(
    {
      ...CreateSignal.properties,
      idempotency_key: Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'as the Idempotency-Key header of a single POST: unique per signal of this agent',
      }),
    },
    { additionalProperties: false },
  ),
  {
    minItems: 1,
    maxItems: SIGNAL_BATCH_MAX,
    description: `a batch of 1 to ${SIGNAL_BATCH_MAX} signals, written in one transaction`,
  },
);
export type CreateSignalBatch = Static<typeof CreateSignalBatch>;

/** One answer per signal of a batch, in its order. */
export const SignalBatchAnswer = Type.Object({
  results: Type.Array(
    Type.Object({
      idempotency_key: Type.String(),
      status: Type.Union([Type.Literal(201), Type.Literal(200), Type.Literal(202)], {
        description: '201 created, 200 its key named a signal already (that one answers), 202 suppressed by the policy',
      }),
      signal_id: Type.Union([Type.String(), Type.Null()]),
      deliveries: Type.Integer(),
      suppressed: Type.Optional(Type.String()),
    }),
  ),
});

/** A signal of a type the tenant's detection policy turned off: not stored. */
export const SuppressedSignal = Type.Object({
  signal_id: Type.Null(),
  deliveries: Type.Literal(0),
  suppressed: Type.String({ description: 'why the signal was not stored' }),
});

export const SignalHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        '1–200 characters of A–Z, a–z, 0–9, `.`, `_`, `:`, `-`, unique per signal of this agent. A POST with a key ' +
        'this agent used before creates nothing and answers 200 with the first signal_id and its deliveries. The ' +
        "key is remembered as long as its signal is kept (signals are kept; erasing a signal's payload keeps the key)",
    }),
  ),
});

export const SignalView = Type.Object({
  signal_id: Type.String(),
  tenant_id: Type.String(),
  signal_type: Type.String(),
  severity: Type.Integer(),
  description: Type.String(),
  server_id: Type.String(),
  server_name: Type.String(),
  identity_id: Type.String(),
  identity_name: Type.String(),
  environment: Type.String(),
  created_at: Type.String(),
  received_at: Type.String(),
  erased_at: Type.Union([Type.String(), Type.Null()], {
    description: 'when its payload (description, identity) was erased on request; null: never',
  }),
  traceparent: Type.Union([Type.String(), Type.Null()], {
    description: 'the W3C traceparent its deliveries carry; null: none',
  }),
});

export const SignalListQuery = Type.Object({
  severity_min: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 5, description: 'only signals of this severity or higher' }),
  ),
  signal_type: Type.Optional(Type.String({ maxLength: 100 })),
  server_id: Type.Optional(Type.String({ maxLength: 200 })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'received at or after this time' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'received before this time' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(BeforeParam),
});
export type SignalListQuery = Static<typeof SignalListQuery>;

export const SignalList = Type.Object({
  signals: Type.Array(SignalView),
  next_before: Type.Union([Type.String(), Type.Null()]),
});

export function signalView(s: SignalTable): Static<typeof SignalView> {
  return {
    signal_id: s.id,
    tenant_id: s.tenant_id,
    signal_type: s.signal_type,
    severity: s.severity,
    description: s.description,
    server_id: s.server_id,
    server_name: s.server_name,
    identity_id: s.identity_id,
    identity_name: s.identity_name,
    environment: s.environment,
    created_at: s.created_at,
    received_at: s.received_at,
    erased_at: s.erased_at ?? null,
    traceparent: s.traceparent ?? null,
  };
}
