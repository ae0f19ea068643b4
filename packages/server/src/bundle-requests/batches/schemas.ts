// Request and response bodies of the bundle-batch routes (fleets), written once with TypeBox:
// validation, types and the API document.

import { BUNDLE_REQUEST_STATES, BundleRequest } from '@guard/contract';
import { Type } from 'typebox';
import { BeforeParam } from '../../kernel/pagination.ts';
import { MAX_BATCH_SERVERS } from './selection.ts';

export const BatchFilterBody = Type.Object(
  {
    environment: Type.Optional(Type.String({ maxLength: 100, description: 'servers of this environment (exactly)' })),
    agent_version: Type.Optional(
      Type.String({ maxLength: 50, description: 'servers whose agent reports this version (exactly)' }),
    ),
    offline_since: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'servers last seen before this time (or never): an RFC 3339 time or a duration before now (90m, 24h, 7d). ' +
          'Without it the filter asks online servers only and skips the offline ones (reason offline)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreateBatchBody = Type.Object(
  {
    server_ids: Type.Optional(
      Type.Array(Type.String({ maxLength: 64 }), {
        maxItems: MAX_BATCH_SERVERS,
        description: `the servers to ask, at most ${MAX_BATCH_SERVERS}; or give filter`,
      }),
    ),
    filter: Type.Optional(BatchFilterBody),
    tenant_id: Type.Optional(
      Type.String({ maxLength: 64, description: 'support staff: the tenant whose servers to ask (admins: their own)' }),
    ),
    dry_run: Type.Optional(
      Type.Boolean({
        description: 'answer 200 with the servers that would be asked and the skipped ones; create nothing',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SkippedServer = Type.Object({
  server_id: Type.String(),
  hostname: Type.Union([Type.String(), Type.Null()], { description: 'null when the server was not found' }),
  reason: Type.Union([
    Type.Literal('not_found'),
    Type.Literal('revoked'),
    Type.Literal('open_request'),
    Type.Literal('offline'),
  ]),
  detail: Type.String({ description: 'the reason in words' }),
});

export const Progress = Type.Object(
  Object.fromEntries([
    ['total', Type.Integer({ description: 'requests in the batch' })],
    ...BUNDLE_REQUEST_STATES.map((s) => [s, Type.Integer()]),
  ]),
  { description: "the batch's requests counted by state" },
);

const FilterView = Type.Union([BatchFilterBody, Type.Null()], {
  description: 'the filter that chose the servers, as given; null when the batch named them',
});

const BatchHead = {
  id: Type.String(),
  tenant_id: Type.String(),
  created_at: Type.String(),
  created_by: Type.String({ description: "the user's id" }),
  created_by_role: Type.Union([Type.Literal('admin'), Type.Literal('support')]),
  filter: FilterView,
  progress: Progress,
};

export const BundleBatch = Type.Object({
  ...BatchHead,
  requests: Type.Array(BundleRequest, {
    description: 'one per server, by hostname: each as GET /v1/bundle-requests/{id} shows it (bundle_id when done)',
  }),
  skipped: Type.Array(SkippedServer),
});

export const BatchSummary = Type.Object({
  ...BatchHead,
  skipped_count: Type.Integer(),
});

export const BatchList = Type.Object({
  batches: Type.Array(BatchSummary),
  next_before: Type.Union([Type.String(), Type.Null()]),
});

export const BatchPreview = Type.Object({
  dry_run: Type.Literal(true),
  filter: FilterView,
  servers: Type.Array(
    Type.Object({
      server_id: Type.String(),
      hostname: Type.String(),
      environment: Type.String(),
      agent_version: Type.String(),
    }),
    { description: 'the servers that would be asked, one request each' },
  ),
  skipped: Type.Array(SkippedServer),
});

export const BatchListQuery = Type.Object({
  tenant_id: Type.Optional(
    Type.String({ maxLength: 64, description: "support staff only; admins and members read their own tenant's" }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(BeforeParam),
});
