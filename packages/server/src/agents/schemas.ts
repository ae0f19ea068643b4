// Request and response schemas of the agent routes, and what an admin sees of an agent.

import { type Static, Type } from 'typebox';
import type { AgentTable } from '../db/index.ts';
import { BeforeParam } from '../pagination.ts';

export const AgentView = Type.Object({
  id: Type.String(),
  hostname: Type.String({ description: 'as the agent reported it at enrolment' }),
  environment: Type.String(),
  agent_version: Type.String({ description: 'at enrolment' }),
  enrolled_at: Type.String(),
  revoked_at: Type.Union([Type.String(), Type.Null()], {
    description: 'when its API key was revoked (it is refused from then on), or null',
  }),
});

export const AgentListQuery = Type.Object({
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

/** A server as the console lists it (DESIGN §4 contract fields first). */
export const ServerView = Type.Object({
  id: Type.String({ description: 'the agent id' }),
  hostname: Type.String(),
  agent_version: Type.String(),
  last_seen_at: Type.Union([Type.String(), Type.Null()], {
    description: 'when its key last authenticated (written at most once a minute); null if never since enrolment',
  }),
  online: Type.Boolean({ description: 'seen in the last 5 minutes, and not revoked' }),
  environment: Type.String(),
  enrolled_at: Type.String(),
  revoked_at: Type.Union([Type.String(), Type.Null()]),
});

export const ServerList = Type.Object({
  servers: Type.Array(ServerView),
  next_before: Type.Union([Type.String(), Type.Null()]),
});

export function serverView(row: AgentTable, now: Date): Static<typeof ServerView> {
  return {
    id: row.id,
    hostname: row.hostname,
    agent_version: row.agent_version,
    last_seen_at: row.last_seen_at,
    online:
      row.revoked_at === null &&
      row.last_seen_at !== null &&
      now.getTime() - Date.parse(row.last_seen_at) < ONLINE_WITHIN_MS,
    environment: row.environment,
    enrolled_at: row.enrolled_at,
    revoked_at: row.revoked_at,
  };
}
