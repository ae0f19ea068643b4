// The console's delivery status words (DESIGN §7): succeeded, pending, retrying, failed.

export const DELIVERY_STATUSES = ['succeeded', 'pending', 'retrying', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const TONE: Record<string, string> = { succeeded: 'ok', pending: 'neutral', retrying: 'warn', failed: 'danger' };

export function DeliveryStatusBadge({ status }: { status: string }) {
  return <span className={`badge ${TONE[status] ?? 'neutral'}`}>{status}</span>;
}
