// Who an agent key belongs to: the one lookup every agent request makes (auth/ resolves the
// principal with it, handed this function by the wiring). Prepared SQL on either engine, not a
// query built per call (building it costs more than running it); last_seen_at is written at
// most once a minute per agent.
//
// The keys asked for in the same turn of the event loop are read by one statement, as the
// outbox writes the signals of a turn in one transaction: under load, agents' requests arrive
// together, and on PostgreSQL each statement is a round trip that wakes a backend. While
// `maxInFlight` statements run, the keys asked for meanwhile wait and go together in the next.
// Nothing is cached: every request's key is read from the database after the request arrived,
// so a key revoked before that is refused.

import type { AgentKeyLookup, AgentPrincipal } from '../auth/index.ts';
import { type Db, engineOf, pgPool, withStatements } from '../db/index.ts';
import { TurnBatcher } from '../kernel/turn-batcher.ts';

/** An agent's last_seen_at is written when it is older than this: one write a minute per busy agent. */
export const AGENT_SEEN_INTERVAL_MS = 60_000;

/** The most requests, so the most keys, one statement reads; more wait for the next. */
export const KEYS_PER_STATEMENT = 256;

export interface AgentRow {
  api_key_hash: string;
  id: string;
  tenant_id: string;
  hostname: string;
  environment: string;
  last_seen_at: string | null;
}

const COLUMNS = 'api_key_hash, id, tenant_id, hostname, environment, last_seen_at';
const SQLITE_ONE = `select ${COLUMNS} from agents where api_key_hash = ? and revoked_at is null`;
const SQLITE_MANY = `select ${COLUMNS} from agents where api_key_hash in (select value from json_each(?)) and revoked_at is null`;
const SQLITE_SEEN = 'update agents set last_seen_at = ? where id in (select value from json_each(?))';
const PG_MANY = `select ${COLUMNS} from agents where api_key_hash = any($1::text[]) and revoked_at is null`;
const PG_SEEN = 'update agents set last_seen_at = $1 where id = any($2::text[])';

/** Reads the live agents of some key hashes and marks those not seen for a minute as seen at `at`. */
export type ReadAgents = (hashes: string[], at: Date) => Promise<AgentRow[]>;

/**
 * `maxInFlight`: statements at once (default: 1 on SQLite, whose statements take turns on its
 * one connection anyway; 2 on PostgreSQL, as the outbox).
 */
export function agentKeyLookup(db: Db, options: { maxInFlight?: number } = {}): AgentKeyLookup {
  const sqlite = engineOf(db) === 'sqlite';
  return batchedByTurn(sqlite ? readSqlite(db) : readPostgres(db), options.maxInFlight ?? (sqlite ? 1 : 2));
}

const unseenSince = (at: Date) => (agent: AgentRow) =>
  agent.last_seen_at === null || at.getTime() - Date.parse(agent.last_seen_at) >= AGENT_SEEN_INTERVAL_MS;

function readSqlite(db: Db): ReadAgents {
  return (hashes, at) =>
    withStatements(db, (sql) => {
      const rows =
        hashes.length === 1
          ? sql.all<AgentRow>(SQLITE_ONE, hashes[0])
          : sql.all<AgentRow>(SQLITE_MANY, JSON.stringify(hashes));
      const unseen = rows.filter(unseenSince(at)).map((agent) => agent.id);
      if (unseen.length > 0) sql.run(SQLITE_SEEN, at.toISOString(), JSON.stringify(unseen));
      return rows;
    });
}

function readPostgres(db: Db): ReadAgents {
  return async (hashes, at) => {
    const { rows } = await pgPool(db).query<AgentRow>({
      name: 'guard_agents_by_keys',
      text: PG_MANY,
      values: [hashes],
    });
    // In id order: two replicas marking the same agents seen lock their rows in one order, never in a circle.
    const unseen = rows
      .filter(unseenSince(at))
      .map((agent) => agent.id)
      .sort();
    if (unseen.length > 0)
      await pgPool(db).query({ name: 'guard_agents_seen', text: PG_SEEN, values: [at.toISOString(), unseen] });
    return rows;
  };
}

/** The lookup of one key, its statement shared with the other keys asked for in the same turn. */
export function batchedByTurn(read: ReadAgents, maxInFlight: number): AgentKeyLookup {
  const batches = new TurnBatcher<{ hash: string; at: Date }, AgentPrincipal | undefined>(
    async (requests) => {
      // One agent's requests in a turn share one read; seen at the latest of the batch's request times.
      const hashes = [...new Set(requests.map((request) => request.hash))];
      const at = Math.max(...requests.map((request) => request.at.getTime()));
      const byHash = new Map((await read(hashes, new Date(at))).map((row) => [row.api_key_hash, row]));
      return requests.map((request) => ({ ok: true, value: principalOf(byHash.get(request.hash)) }));
    },
    { maxBatch: KEYS_PER_STATEMENT, maxInFlight },
  );
  return (hash, at) => batches.submit({ hash, at });
}

function principalOf(agent: AgentRow | undefined): AgentPrincipal | undefined {
  return (
    agent && {
      kind: 'agent',
      agentId: agent.id,
      tenantId: agent.tenant_id,
      hostname: agent.hostname,
      environment: agent.environment,
    }
  );
}
