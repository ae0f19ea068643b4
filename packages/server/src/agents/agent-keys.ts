// Who an agent key belongs to: the one lookup every agent request makes (auth/ resolves the
// principal with it, handed this function by the wiring). Prepared SQL on either engine, not a
// query built per call (building it costs more than running it); last_seen_at is written at
// most once a minute per agent.

import type { AgentKeyLookup, AgentPrincipal } from '../auth/index.ts';
import { type Db, engineOf, pgPool, withStatements } from '../db/index.ts';

/** An agent's last_seen_at is written when it is older than this: one write a minute per busy agent. */
export const AGENT_SEEN_INTERVAL_MS = 60_000;

interface AgentRow {
  id: string;
  tenant_id: string;
  hostname: string;
  environment: string;
  last_seen_at: string | null;
}

const SELECT_SQLITE =
  'select id, tenant_id, hostname, environment, last_seen_at from agents where api_key_hash = ? and revoked_at is null';
const SELECT_PG =
  'select id, tenant_id, hostname, environment, last_seen_at from agents where api_key_hash = $1 and revoked_at is null';

export function agentKeyLookup(db: Db): AgentKeyLookup {
  const stale = (agent: AgentRow, at: Date) =>
    agent.last_seen_at === null || at.getTime() - Date.parse(agent.last_seen_at) >= AGENT_SEEN_INTERVAL_MS;
  const principal = (agent: AgentRow | undefined): AgentPrincipal | undefined =>
    agent && {
      kind: 'agent',
      agentId: agent.id,
      tenantId: agent.tenant_id,
      hostname: agent.hostname,
      environment: agent.environment,
    };
  if (engineOf(db) === 'sqlite')
    return async (hash, at) =>
      principal(
        await withStatements(db, (sql) => {
          const row = sql.get<AgentRow>(SELECT_SQLITE, hash);
          if (row && stale(row, at))
            sql.run('update agents set last_seen_at = ? where id = ?', at.toISOString(), row.id);
          return row;
        }),
      );
  return async (hash, at) => {
    const agent = (await pgPool(db).query<AgentRow>({ name: 'guard_agent_by_key', text: SELECT_PG, values: [hash] }))
      .rows[0];
    if (agent && stale(agent, at))
      await pgPool(db).query({
        name: 'guard_agent_seen',
        text: 'update agents set last_seen_at = $1 where id = $2',
        values: [at.toISOString(), agent.id],
      });
    return principal(agent);
  };
}
