// Request and response schemas of the agent routes, and what an admin sees of an agent.

import { DetectorStatus } from '@guard/contract/detection';
import { type Static, Type } from 'typebox';
import type { AgentTable } from '../db/index.ts';
import { BeforeParam } from '../kernel/pagination.ts';

export const AgentView = Type.Object({
  id: Type.String(),
  hostname: Type.String({ description: 'as the agent reported it last (enrolment, or the daemon’s heartbeat)' }),
  environment: Type.String(),
  agent_version: Type.String({ description: 'as the agent reported it last (enrolment, or the daemon’s heartbeat)' }),
  enrolled_at: Type.String(),
  revoked_at: Type.Union([Type.String(), Type.Null()], {
    description: 'when its API key was revoked (it is refused from then on), or null',
  }),
});

export const AgentListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(BeforeParam),
});

export const ServerListQuery = Type.Object({
  tenant_id: Type.Optional(
    Type.String({ maxLength: 64, description: "support staff only; admins and members list their own tenant's" }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(BeforeParam),
});

export const AgentList = Type.Object({
  agents: Type.Array(AgentView),
  next_before: Type.Union([Type.String(), Type.Null()]),
});

/** What an admin sees of an agent: never its key or the key's hash. */
export function agentView(row: AgentTable): Static<typeof AgentView> {
  return {
    id: row.id,
    hostname: row.hostname,
    environment: row.environment,
    agent_version: row.agent_version,
    enrolled_at: row.enrolled_at,
    revoked_at: row.revoked_at,
  };
}

/** An agent seen within this long is `online` on GET /v1/servers. */
export const ONLINE_WITHIN_MS = 5 * 60_000;

/** The open bundle request of a server, on its row of the Servers list. */
export const ActiveRequest = Type.Object({
  id: Type.String(),
  state: Type.String({ description: 'queued, delivered, collecting or uploading' }),
  created_at: Type.String(),
});

/** A server as the console lists it (DESIGN §4 contract fields first). */
export const ServerView = Type.Object({
  id: Type.String({ description: 'the agent id' }),
  hostname: Type.String({ description: 'as reported last: at enrolment, or by the daemon’s heartbeat' }),
  agent_version: Type.String({ description: 'as reported last: at enrolment, or by the daemon’s heartbeat' }),
  last_seen_at: Type.Union([Type.String(), Type.Null()], {
    description:
      'when its key last authenticated (written at most once a minute, and at every heartbeat); null if never since enrolment',
  }),
  online: Type.Boolean({ description: 'seen in the last 5 minutes, and not revoked' }),
  tenant_id: Type.String(),
  environment: Type.String(),
  enrolled_at: Type.String(),
  revoked_at: Type.Union([Type.String(), Type.Null()]),
  last_heartbeat_at: Type.Union([Type.String(), Type.Null()], {
    description: 'the last heartbeat of `guard-agent daemon`; null when the daemon never ran',
  }),
  uptime_seconds: Type.Union([Type.Integer(), Type.Null()], { description: "the host's uptime at the last heartbeat" }),
  agent_uptime_seconds: Type.Union([Type.Integer(), Type.Null()], {
    description: 'how long the daemon had run at the last heartbeat',
  }),
  active_request: Type.Union([ActiveRequest, Type.Null()], {
    description: 'its open bundle request (one at a time), or null',
  }),
  detectors: Type.Union([Type.Array(DetectorStatus), Type.Null()], {
    description:
      'each detector of the daemon (auth_log, file_integrity, exec): running, failed or disabled, why, and its ' +
      'last event, as the last heartbeat reported; null when no heartbeat reported them',
  }),
  spool_depth: Type.Union([Type.Integer(), Type.Null()], {
    description: 'signals waiting in the daemon’s spool at the last heartbeat; null: not reported',
  }),
  last_signal_at: Type.Union([Type.String(), Type.Null()], {
    description: 'when the newest signal of this server was received; null: none yet',
  }),
});

export const ServerList = Type.Object({
  servers: Type.Array(ServerView),
  next_before: Type.Union([Type.String(), Type.Null()]),
});

/** Seen in the last ONLINE_WITHIN_MS, and not revoked. */
export function isOnline(row: Pick<AgentTable, 'revoked_at' | 'last_seen_at'>, now: Date): boolean {
  return (
    row.revoked_at === null &&
    row.last_seen_at !== null &&
    now.getTime() - Date.parse(row.last_seen_at) < ONLINE_WITHIN_MS
  );
}

export function serverView(
  row: AgentTable,
  now: Date,
  active: Static<typeof ActiveRequest> | undefined,
  lastSignalAt: string | null,
): Static<typeof ServerView> {
  return {
    id: row.id,
    hostname: row.hostname,
    agent_version: row.agent_version,
    last_seen_at: row.last_seen_at,
    online: isOnline(row, now),
    tenant_id: row.tenant_id,
    environment: row.environment,
    enrolled_at: row.enrolled_at,
    revoked_at: row.revoked_at,
    last_heartbeat_at: row.last_heartbeat_at,
    uptime_seconds: row.uptime_seconds,
    agent_uptime_seconds: row.agent_uptime_seconds,
    active_request: active ?? null,
    detectors: row.detectors ? (JSON.parse(row.detectors) as DetectorStatus[]) : null,
    spool_depth: row.spool_depth ?? null,
    last_signal_at: lastSignalAt,
  };
}
