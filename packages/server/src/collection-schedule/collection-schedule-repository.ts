// A tenant's collection_schedule setting (one row of collection_schedules, none when it never
// set one), its changes audited in the transaction that makes them, and what the scheduler
// reads and claims. Every query names its tenant.

import { audit } from '../audit/index.ts';
import type { UserPrincipal } from '../auth/index.ts';
import type { CollectionScheduleTable, Db } from '../db/index.ts';
import { latestSlot, type Weekday } from './slots.ts';

/** Hours between two bundles the critical trigger makes of one server, when the tenant chose none. */
export const DEFAULT_MIN_INTERVAL_HOURS = 24;

export interface WeeklyPart {
  enabled: boolean;
  weekday: Weekday;
  /** 0–23, UTC. */
  hour: number;
}

export interface CriticalPart {
  enabled: boolean;
  min_interval_hours: number;
}

/** The setting as the API shows and takes it; a part left out is not set. */
export interface CollectionSchedule {
  weekly?: WeeklyPart;
  on_critical_signal?: CriticalPart;
}

export function scheduleOf(row: CollectionScheduleTable | undefined): CollectionSchedule {
  const schedule: CollectionSchedule = {};
  if (!row) return schedule;
  if (row.weekly_weekday !== null && row.weekly_hour !== null)
    schedule.weekly = {
      enabled: row.weekly_enabled === 1,
      weekday: row.weekly_weekday as Weekday,
      hour: row.weekly_hour,
    };
  if (row.critical_min_interval_hours !== null)
    schedule.on_critical_signal = {
      enabled: row.critical_enabled === 1,
      min_interval_hours: row.critical_min_interval_hours,
    };
  return schedule;
}

/** The audit target of a change: what it is now, in words (`weekly=monday@09 on; on_critical_signal=24h off`). */
function described(s: CollectionSchedule): string {
  const weekly = s.weekly
    ? `weekly=${s.weekly.weekday}@${String(s.weekly.hour).padStart(2, '0')} ${s.weekly.enabled ? 'on' : 'off'}`
    : 'weekly=none';
  const critical = s.on_critical_signal
    ? `on_critical_signal=${s.on_critical_signal.min_interval_hours}h ${s.on_critical_signal.enabled ? 'on' : 'off'}`
    : 'on_critical_signal=none';
  return `${weekly}; ${critical}`;
}

export class CollectionSchedulesRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async row(tenantId: string): Promise<CollectionScheduleTable | undefined> {
    return this.#db.selectFrom('collection_schedules').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
  }

  /** The rows of these tenants (a tenant that never set one has none). */
  async rows(tenantIds: readonly string[]): Promise<CollectionScheduleTable[]> {
    return this.#db.selectFrom('collection_schedules').selectAll().where('tenant_id', 'in', tenantIds).execute();
  }

  /**
   * Replaces the tenant's setting; audited (`collection_schedule.update`) when it changed. A
   * weekly part whose weekday or hour is new (or newly on) starts from the next slot: the one
   * already past is marked as passed over, so turning it on never fires at once.
   */
  async put(
    tenantId: string,
    schedule: CollectionSchedule,
    by: { actor: UserPrincipal; at: Date },
  ): Promise<CollectionScheduleTable> {
    return this.#db.transaction().execute(async (trx) => {
      const before = await trx
        .selectFrom('collection_schedules')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      const w = schedule.weekly;
      const c = schedule.on_critical_signal;
      const sameSlot =
        before !== undefined &&
        w !== undefined &&
        before.weekly_enabled === 1 &&
        w.enabled &&
        before.weekly_weekday === w.weekday &&
        before.weekly_hour === w.hour;
      const row: CollectionScheduleTable = {
        tenant_id: tenantId,
        weekly_enabled: w?.enabled ? 1 : 0,
        weekly_weekday: w?.weekday ?? null,
        weekly_hour: w?.hour ?? null,
        weekly_last_slot: sameSlot
          ? before.weekly_last_slot
          : w
            ? latestSlot(by.at, w.weekday, w.hour).toISOString()
            : null,
        critical_enabled: c?.enabled ? 1 : 0,
        critical_min_interval_hours: c?.min_interval_hours ?? null,
        updated_at: by.at.toISOString(),
        updated_by: by.actor.userId,
      };
      const { tenant_id: _, ...change } = row;
      if (before) await trx.updateTable('collection_schedules').set(change).where('tenant_id', '=', tenantId).execute();
      else await trx.insertInto('collection_schedules').values(row).execute();
      const was = described(scheduleOf(before));
      const now = described(scheduleOf(row));
      if (was !== now)
        await audit({ db: trx, now: () => by.at }, by.actor, 'collection_schedule.update', now, tenantId);
      return row;
    });
  }

  /** Every tenant's schedule whose weekly part is on. */
  async weeklyOn(): Promise<CollectionScheduleTable[]> {
    return this.#db
      .selectFrom('collection_schedules')
      .selectAll()
      .where('weekly_enabled', '=', 1)
      .where('weekly_weekday', 'is not', null)
      .orderBy('tenant_id')
      .execute();
  }

  /**
   * Claims the weekly slot `slot` of the tenant: true for the one caller (of any replica) that
   * moves weekly_last_slot to it from the row as read (same weekday and hour, still on).
   */
  async claimSlot(row: CollectionScheduleTable, slot: string): Promise<boolean> {
    let update = this.#db
      .updateTable('collection_schedules')
      .set({ weekly_last_slot: slot })
      .where('tenant_id', '=', row.tenant_id)
      .where('weekly_enabled', '=', 1)
      .where('weekly_weekday', '=', row.weekly_weekday)
      .where('weekly_hour', '=', row.weekly_hour);
    update = update.where((eb) => eb.or([eb('weekly_last_slot', 'is', null), eb('weekly_last_slot', '<', slot)]));
    const result = await update.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The servers of the tenant that are not revoked, with when they were last seen. */
  async liveServers(tenantId: string): Promise<{ id: string; revoked_at: null; last_seen_at: string | null }[]> {
    const rows = await this.#db
      .selectFrom('agents')
      .select(['id', 'last_seen_at'])
      .where('tenant_id', '=', tenantId)
      .where('revoked_at', 'is', null)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ ...r, revoked_at: null }));
  }

  /** The newest request the critical trigger made of the tenant's server since `since`, if any. */
  async criticalSince(tenantId: string, agentId: string, since: string): Promise<{ id: string } | undefined> {
    return this.#db
      .selectFrom('bundle_requests')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('agent_id', '=', agentId)
      .where('trigger', '=', 'critical_signal')
      .where('created_at', '>', since)
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
  }
}
