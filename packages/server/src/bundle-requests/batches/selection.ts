// Which servers a batch asks for a bundle, and why it skips the others: a pure function of the
// servers read, their open requests and the clock (the repository reads, the route decides).
//
// Policy (docs/guard-server.md, "Bundle batches"):
// - By ids: every id once; an id that is not one of the tenant's servers is skipped as
//   `not_found` (another tenant's server is indistinguishable from no server: no hostname);
//   a revoked server is `revoked`; one with an open request is `open_request`. Offline servers
//   are asked like a single request asks them: the request waits for the daemon until it expires.
// - By filter: the tenant's servers whose environment and agent version equal the filter's
//   (each when given). Without offline_since only online servers are asked, and the matching
//   offline ones are skipped as `offline` (a request to them would only expire); with
//   offline_since the filter matches the servers last seen before that time (or never seen),
//   and those are asked. Revoked and busy servers are skipped as above.

import type { AgentTable } from '../../db/index.ts';

/** At most this many servers get a request in one batch (a larger selection is refused, not cut). */
export const MAX_BATCH_SERVERS = 500;

export type SkipReason = 'not_found' | 'revoked' | 'open_request' | 'offline';

export interface Skipped {
  server_id: string;
  /** null when the server is not found (nothing is told about another tenant's server). */
  hostname: string | null;
  reason: SkipReason;
  /** The reason in words. */
  detail: string;
}

export interface BatchFilter {
  environment?: string;
  agent_version?: string;
  /** An RFC 3339 time, or a duration before now: `90m`, `24h`, `7d`. */
  offline_since?: string;
}

export interface Selection {
  chosen: AgentTable[];
  skipped: Skipped[];
}

const DURATION = /^(\d{1,6})(m|h|d)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

/** The instant offline_since names; an Error whose message says what is wrong otherwise. */
export function offlineSinceInstant(value: string, now: Date): Date | Error {
  const d = DURATION.exec(value);
  if (d) return new Date(now.getTime() - Number(d[1]) * UNIT_MS[d[2] as keyof typeof UNIT_MS]);
  if (!RFC3339.test(value) || Number.isNaN(Date.parse(value)))
    return new Error(
      `offline_since must be an RFC 3339 time (2026-11-27T08:00:00Z) or a duration before now (90m, 24h, 7d), not "${value}"`,
    );
  const at = new Date(Date.parse(value));
  if (at.getTime() > now.getTime()) return new Error(`offline_since ${value} is in the future`);
  return at;
}

function skip(agent: AgentTable, reason: SkipReason, detail: string): Skipped {
  return { server_id: agent.id, hostname: agent.hostname, reason, detail };
}

const openDetail = (r: { id: string; state: string }) =>
  `it already has an open bundle request (${r.id}, ${r.state}); one at a time`;
const REVOKED_DETAIL = "this server's agent key was revoked: it can no longer be asked for a bundle";

/** The servers named by id, in the order given (each once). `found` holds the tenant's servers among them. */
export function selectByIds(
  ids: string[],
  found: Map<string, AgentTable>,
  open: Map<string, { id: string; state: string }>,
): Selection {
  const out: Selection = { chosen: [], skipped: [] };
  for (const id of new Set(ids)) {
    const agent = found.get(id);
    const busy = open.get(id);
    if (!agent)
      out.skipped.push({ server_id: id, hostname: null, reason: 'not_found', detail: 'no such server in this tenant' });
    else if (agent.revoked_at !== null) out.skipped.push(skip(agent, 'revoked', REVOKED_DETAIL));
    else if (busy) out.skipped.push(skip(agent, 'open_request', openDetail(busy)));
    else out.chosen.push(agent);
  }
  return out;
}

/**
 * The servers a filter chose. `matched` are the tenant's servers that match environment,
 * agent_version and (when given) offline_since already; `online` says which are online now.
 */
export function selectByFilter(
  matched: AgentTable[],
  filter: BatchFilter,
  online: (agent: AgentTable) => boolean,
  open: Map<string, { id: string; state: string }>,
): Selection {
  const out: Selection = { chosen: [], skipped: [] };
  for (const agent of matched) {
    const busy = open.get(agent.id);
    if (agent.revoked_at !== null) out.skipped.push(skip(agent, 'revoked', REVOKED_DETAIL));
    else if (filter.offline_since === undefined && !online(agent))
      out.skipped.push(
        skip(agent, 'offline', 'offline: not seen in the last 5 minutes (give offline_since to ask offline servers)'),
      );
    else if (busy) out.skipped.push(skip(agent, 'open_request', openDetail(busy)));
    else out.chosen.push(agent);
  }
  return out;
}
