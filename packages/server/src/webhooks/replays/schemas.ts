// Request and response schemas of the replay routes, and what a user sees of a replay.

import { type Static, Type } from 'typebox';
import type { WebhookReplayTable } from '../../db/index.ts';

const Instant = Type.String({ format: 'date-time', maxLength: 64, description: 'RFC 3339' });

export const StartReplay = Type.Object(
  {
    status: Type.Optional(
      Type.Union([Type.Literal('failed'), Type.Literal('succeeded')], {
        description: 'only deliveries that ended so; omitted: failed and succeeded alike',
      }),
    ),
    since: { ...Instant, description: 'deliveries created at or after this time (RFC 3339)' },
    until: Type.Optional({ ...Instant, description: 'and before this time; default: now' }),
    dry_run: Type.Optional(
      Type.Boolean({ default: false, description: 'only count what would be sent; nothing is re-queued' }),
    ),
  },
  { additionalProperties: false },
);
export type StartReplay = Static<typeof StartReplay>;

export const ReplayCount = Type.Object({
  dry_run: Type.Literal(true),
  count: Type.Integer({ description: 'how many deliveries the replay would send' }),
  since: Type.String(),
  until: Type.String(),
});

export const ReplayView = Type.Object({
  id: Type.String(),
  endpoint_id: Type.String(),
  status: Type.Union([Type.Literal('failed'), Type.Literal('succeeded'), Type.Null()]),
  since: Type.String(),
  until: Type.String(),
  state: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('cancelled')], {
    description: 'running until every delivery it re-queued has been attempted (or it was cancelled)',
  }),
  total: Type.Integer({ description: 'deliveries that matched when it started (the dry run’s count)' }),
  queued: Type.Integer({ description: 're-queued so far' }),
  sent: Type.Integer({ description: 're-queued and attempted' }),
  remaining: Type.Integer({ description: 'total less sent (0 once done; what a cancel left unsent)' }),
  skipped: Type.Integer({
    description: 'matched at the start but changed before their turn (redelivered, pruned): not sent',
  }),
  error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  finished_at: Type.Union([Type.String(), Type.Null()]),
  requested_by: Type.String({ description: 'the admin who started it (user id)' }),
});
export type ReplayView = Static<typeof ReplayView>;

export const ReplayList = Type.Object({ replays: Type.Array(ReplayView) });

export function replayView(r: WebhookReplayTable, inFlight: number): ReplayView {
  const sent = Math.max(0, r.queued - inFlight);
  const fedAll = r.state === 'done';
  return {
    id: r.id,
    endpoint_id: r.endpoint_id,
    status: (r.status as 'failed' | 'succeeded' | null) ?? null,
    since: r.since,
    until: r.until,
    // Fed completely, but the last ones are still on their way.
    state: fedAll && inFlight > 0 ? 'running' : r.state,
    total: r.total,
    queued: r.queued,
    sent,
    remaining: fedAll ? inFlight : Math.max(0, r.total - sent),
    skipped: fedAll ? Math.max(0, r.total - r.queued) : 0,
    error: r.error,
    created_at: r.created_at,
    finished_at: fedAll && inFlight > 0 ? null : r.finished_at,
    requested_by: r.requested_by,
  };
}
