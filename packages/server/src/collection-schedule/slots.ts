// The weekly slots of a collection schedule: a weekday and an hour, UTC. The slot that counts
// at a moment is the latest one at or before it; a slot is fired once (the scheduler claims it
// in weekly_last_slot), so a server that was down over one or several slots fires the latest
// one once when it is back, never one per missed week.

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const WEEK_MS = 7 * DAY_MS;

/** The latest `weekday` at `hour`:00 UTC at or before `now`. */
export function latestSlot(now: Date, weekday: Weekday, hour: number): Date {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const today = (now.getUTCDay() + 6) % 7; // monday 0 … sunday 6
  const back = (today - WEEKDAYS.indexOf(weekday) + 7) % 7;
  let slot = midnight - back * DAY_MS + hour * HOUR_MS;
  if (slot > now.getTime()) slot -= WEEK_MS;
  return new Date(slot);
}

/**
 * When the weekly run fires next: the latest slot if it has not fired yet (it fires at the
 * scheduler's next pass), else the one after it.
 */
export function nextRun(now: Date, weekday: Weekday, hour: number, lastSlot: string | null): Date {
  const latest = latestSlot(now, weekday, hour);
  if (lastSlot === null || lastSlot < latest.toISOString()) return latest;
  return new Date(latest.getTime() + WEEK_MS);
}
