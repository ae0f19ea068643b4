// Scheduled collection (issue 24, item 5): bundle requests the tenant's collection_schedule
// makes, as ordinary console-push requests (the agent uploads them with trigger console_push
// and the request's id), each one marked with what made it (trigger schedule_weekly or
// critical_signal with the signal's id) and audited with the actor `schedule`. The schedule only
// makes requests: who may read the bundles stays the tenant's support-access setting.
//
// - Weekly (runWeeklySchedules): on the maintenance timer (--gc-interval), under exclusiveJob.
//   For each tenant whose weekly part is on, the latest slot (weekday and hour, UTC) at or
//   before now is fired unless it already was: the slot is claimed first by a conditional
//   UPDATE of weekly_last_slot, so one replica of several on PostgreSQL wins it even if two
//   passes ran at once, and a server that was down over a slot (or several) fires the latest
//   one once when it is back. Then one request per online, non-revoked server of the tenant;
//   a server that has an open request keeps it (one open request per server). A replica that
//   dies between the claim and the requests loses that week's run (it is never made twice).
// - On a critical signal (criticalSignalTrigger, called by signal ingest): a request of the
//   server that raised it, unless the part is off, the server has an open request, or the
//   trigger made one of this server within min_interval_hours. Two signals at once make at
//   most one: the second finds the first open (the one-open index holds across replicas).
//   The schedules of the critical signals of one turn of the event loop are read by one
//   statement (criticalSignalTrigger): under load, signals arrive together, and on PostgreSQL
//   each read is a round trip. Nothing is cached: a signal's schedule is read after the signal
//   was stored, so a part turned off before that makes no request.

import { isOnline } from '../agents/index.ts';
import type { AuditActor } from '../audit/index.ts';
import { BundleRequestsRepository, type RequestTrigger } from '../bundle-requests/index.ts';
import type { CollectionScheduleTable, Db } from '../db/index.ts';
import { TurnBatcher } from '../kernel/turn-batcher.ts';
import { CollectionSchedulesRepository } from './collection-schedule-repository.ts';
import { latestSlot, type Weekday } from './slots.ts';

/** Who the audit log names for a request the schedule made. */
export const SCHEDULE_ACTOR: AuditActor = { userId: 'schedule', role: 'schedule' };

/** What the scheduler needs of the server. */
export interface ScheduleDeps {
  db: Db;
  now: () => Date;
  /** Wakes the held command poll of the server a request was made for. */
  commands: { wake(agentId: string): void };
  config: { bundleRequestTtlMs: number };
}

export interface WeeklyResult {
  /** Tenants whose slot fired in this pass. */
  tenants: number;
  /** Requests made. */
  requested: number;
  /** Servers left out: offline, or with an open request. */
  skipped: number;
}

async function request(
  deps: ScheduleDeps,
  agent: { id: string; tenantId: string },
  trigger: RequestTrigger,
  at: Date,
): Promise<{ created: boolean; id: string }> {
  const { created, row } = await new BundleRequestsRepository(deps.db).create(agent, {
    actor: SCHEDULE_ACTOR,
    at,
    ttlMs: deps.config.bundleRequestTtlMs,
    trigger,
  });
  if (created) deps.commands.wake(agent.id);
  return { created, id: row.id };
}

export async function runWeeklySchedules(deps: ScheduleDeps): Promise<WeeklyResult> {
  const schedules = new CollectionSchedulesRepository(deps.db);
  const now = deps.now();
  const result: WeeklyResult = { tenants: 0, requested: 0, skipped: 0 };
  for (const row of await schedules.weeklyOn()) {
    const slot = latestSlot(now, row.weekly_weekday as Weekday, row.weekly_hour ?? 0).toISOString();
    if (row.weekly_last_slot !== null && row.weekly_last_slot >= slot) continue;
    if (!(await schedules.claimSlot(row, slot))) continue; // another replica fired it
    result.tenants += 1;
    for (const server of await schedules.liveServers(row.tenant_id)) {
      if (!isOnline(server, now)) {
        result.skipped += 1;
        continue;
      }
      const made = await request(deps, { id: server.id, tenantId: row.tenant_id }, { kind: 'schedule_weekly' }, now);
      if (made.created) result.requested += 1;
      else result.skipped += 1;
    }
  }
  return result;
}

/** What the critical trigger did with a signal. */
export type CriticalOutcome =
  | { outcome: 'requested'; requestId: string }
  | { outcome: 'off' }
  | { outcome: 'open'; requestId: string }
  | { outcome: 'within_interval'; requestId: string };

/** The most tenants one read of the critical trigger takes; more wait for the next. */
const SCHEDULES_PER_READ = 256;

type CriticalSignal = { id: string; tenant_id: string; agent_id: string };

/**
 * The critical trigger: for a critical signal of a server, asks it for a bundle if the
 * tenant's schedule says so. The schedules asked for in one turn are read together.
 */
export function criticalSignalTrigger(deps: ScheduleDeps): (signal: CriticalSignal) => Promise<CriticalOutcome> {
  const schedules = new CollectionSchedulesRepository(deps.db);
  const reads = new TurnBatcher<string, CollectionScheduleTable | undefined>(
    async (tenantIds) => {
      const rows = new Map((await schedules.rows([...new Set(tenantIds)])).map((row) => [row.tenant_id, row]));
      return tenantIds.map((tenantId) => ({ ok: true, value: rows.get(tenantId) }));
    },
    { maxBatch: SCHEDULES_PER_READ, maxInFlight: 2 },
  );
  return async (signal) => onCriticalSignal(deps, schedules, await reads.submit(signal.tenant_id), signal);
}

async function onCriticalSignal(
  deps: ScheduleDeps,
  schedules: CollectionSchedulesRepository,
  row: CollectionScheduleTable | undefined,
  signal: CriticalSignal,
): Promise<CriticalOutcome> {
  if (row?.critical_enabled !== 1 || row.critical_min_interval_hours === null) return { outcome: 'off' };
  const now = deps.now();
  const since = new Date(now.getTime() - row.critical_min_interval_hours * 3_600_000).toISOString();
  const recent = await schedules.criticalSince(signal.tenant_id, signal.agent_id, since);
  if (recent) return { outcome: 'within_interval', requestId: recent.id };
  const made = await request(
    deps,
    { id: signal.agent_id, tenantId: signal.tenant_id },
    { kind: 'critical_signal', signalId: signal.id },
    now,
  );
  return made.created ? { outcome: 'requested', requestId: made.id } : { outcome: 'open', requestId: made.id };
}
