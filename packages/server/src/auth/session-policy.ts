// When a console session ends (pure; the clock is passed in). Two limits: an idle expiry that
// slides with use, and an absolute expiry fixed at sign-in that no activity extends. Use is
// written at most once a minute, so a busy console costs one write a minute, not one a request.

export interface SessionLifetimes {
  idleTimeoutMs: number;
  maxAgeMs: number;
}

/** How often a session's use is written (and its idle expiry moved). */
export const SESSION_TOUCH_INTERVAL_MS = 60_000;

export interface SessionTimes {
  last_seen_at: string;
  idle_expires_at: string;
  expires_at: string;
  revoked_at: string | null;
}

/** The times of a session signed in at `now`. */
export function newSessionTimes(now: Date, lifetimes: SessionLifetimes): Omit<SessionTimes, 'revoked_at'> {
  const expires = now.getTime() + lifetimes.maxAgeMs;
  return {
    last_seen_at: now.toISOString(),
    idle_expires_at: new Date(Math.min(now.getTime() + lifetimes.idleTimeoutMs, expires)).toISOString(),
    expires_at: new Date(expires).toISOString(),
  };
}

/** A session is live until it is revoked, its idle expiry or its absolute expiry (each exclusive). */
export function isLive(s: SessionTimes, now: Date): boolean {
  const t = now.getTime();
  return s.revoked_at === null && t < Date.parse(s.idle_expires_at) && t < Date.parse(s.expires_at);
}

/**
 * The use to write for a live session used at `now`, or undefined when the last write is less
 * than SESSION_TOUCH_INTERVAL_MS old. The idle expiry never passes the absolute one.
 */
export function touch(
  s: SessionTimes,
  now: Date,
  lifetimes: SessionLifetimes,
): { last_seen_at: string; idle_expires_at: string } | undefined {
  if (now.getTime() - Date.parse(s.last_seen_at) < SESSION_TOUCH_INTERVAL_MS) return undefined;
  const idle = Math.min(now.getTime() + lifetimes.idleTimeoutMs, Date.parse(s.expires_at));
  return { last_seen_at: now.toISOString(), idle_expires_at: new Date(idle).toISOString() };
}
