// Time-ordered ids (UUIDv7, RFC 9562) for rows written on every signal: a new row lands at the
// right edge of each B-tree instead of on a random page, so a group commit dirties a few pages
// instead of one per row. Random bits come from a pooled CSPRNG buffer (one getrandom call
// per 256 ids).

import { createHash, randomFillSync } from 'node:crypto';

const POOL = Buffer.alloc(10 * 256);
let offset = POOL.length;

function random10(): Buffer {
  if (offset + 10 > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const bytes = POOL.subarray(offset, offset + 10);
  offset += 10;
  return bytes;
}

/** A UUIDv7 as 32 hex digits: 48 bits of Unix milliseconds, then 74 random bits (or bits of `r`). */
function uuidv7Hex(nowMs: number, r: Uint8Array = random10()): string {
  const time = nowMs.toString(16).padStart(12, '0');
  const randA = (0x7000 | (((r[0] << 8) | r[1]) & 0x0fff)).toString(16);
  const randB = Buffer.from([0x80 | (r[2] & 0x3f), r[3], r[4], r[5], r[6], r[7], r[8], r[9]]).toString('hex');
  return time + randA + randB;
}

/** A UUIDv7 in the usual 8-4-4-4-12 form (the `Guard-Delivery` header carries one). */
export function timeOrderedUuid(nowMs = Date.now()): string {
  const h = uuidv7Hex(nowMs);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** `prefix_` and a UUIDv7's 32 hex digits: ids that sort by creation time. */
export function timeOrderedId(prefix: string, nowMs = Date.now()): string {
  return `${prefix}_${uuidv7Hex(nowMs)}`;
}

/**
 * A time-ordered id whose other bits come from SHA-256 of `seed`: the same seed and time give
 * the same id, so a row derived from another (an audit entry's event) can be written at most
 * once, its primary key saying whether it was.
 */
export function derivedTimeOrderedId(prefix: string, ms: number, seed: string): string {
  return `${prefix}_${uuidv7Hex(ms, createHash('sha256').update(seed).digest().subarray(0, 10))}`;
}
