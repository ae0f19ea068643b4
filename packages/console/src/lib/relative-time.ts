// "3 minutes ago" for a timestamp, and its exact form for the title (hover) text. Pure: the
// clock is passed in.

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const exact = new Intl.DateTimeFormat('en-GB', {
  dateStyle: 'medium',
  timeStyle: 'medium',
  timeZone: 'UTC',
});

export function formatRelative(iso: string, now: number): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (Number.isNaN(seconds)) return iso;
  if (Math.abs(seconds) < 10) return 'just now';
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') return relative.format(Math.trunc(seconds / size), unit);
  }
  return iso;
}

/** The exact time in UTC, e.g. "21 Nov 2026, 10:00:00 UTC". */
export function formatExact(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : `${exact.format(ms)} UTC`;
}

/**
 * When a retry is due, worded for a time that may have passed: "due now" once it is due (the
 * worker takes it within moments), "in 3 seconds" under a minute, then as formatRelative.
 */
export function formatNextRetry(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  if (Number.isNaN(ms)) return iso;
  if (ms <= 500) return 'due now';
  if (ms < 60_000) return relative.format(Math.ceil(ms / 1000), 'second');
  return formatRelative(iso, now);
}
