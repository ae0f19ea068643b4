// Bounds of time-ordered ids (UUIDv7, ids.ts): every UUIDv7 made at or after `ms` sorts at or
// after uuidv7Floor(ms), byte for byte (SQLite's text order, PostgreSQL's `collate "C"`), and
// every one made before it sorts before. Retention and the monthly partitions use it.

export function uuidv7Floor(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`;
}
