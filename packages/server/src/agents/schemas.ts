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
