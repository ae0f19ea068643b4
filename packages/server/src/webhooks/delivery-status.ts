// The console's status word of a delivery (DESIGN §7 contract: the deliveries table shows
// `succeeded`, `pending`, `retrying` or `failed`), from the stored state and attempt count:
//   succeeded  an attempt got a 2xx
//   failed     given up (schedule exhausted, endpoint disabled); an admin may redeliver
//   pending    no attempt has finished yet (waiting for the first, or the first in flight)
//   retrying   an attempt failed and another is scheduled (or in flight)
// A redelivered delivery keeps its attempt count, so it reads `retrying` until it ends.

import type { DeliveryState } from '../db/index.ts';

export const DELIVERY_STATUSES = ['succeeded', 'pending', 'retrying', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export function deliveryStatus(d: { state: DeliveryState; attempts: number }): DeliveryStatus {
  if (d.state === 'succeeded' || d.state === 'failed') return d.state;
  return d.attempts === 0 ? 'pending' : 'retrying';
}

/** The stored rows a status word stands for: states, and whether an attempt has finished. */
export function statusCondition(status: DeliveryStatus): { states: DeliveryState[]; attempted?: boolean } {
  switch (status) {
    case 'succeeded':
    case 'failed':
      return { states: [status] };
    case 'pending':
      return { states: ['pending', 'delivering'], attempted: false };
    case 'retrying':
      return { states: ['pending', 'delivering'], attempted: true };
  }
}
