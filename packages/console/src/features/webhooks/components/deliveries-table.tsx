import { Link } from 'react-router';
import { ACTIONS, DataTable } from '../../../components/data-table.tsx';
import { DeliveryStatusBadge } from '../../../components/delivery-status.tsx';
import { NextRetry } from '../../../components/next-retry.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { shortId } from '../../../lib/short-id.ts';

export interface DeliveryRow {
  id: string;
  signal_id: string;
  status: string;
  attempts: number;
  last_status: number | null;
  next_attempt_at: string | null;
  created_at: string;
}

export function DeliveriesTable({
  deliveries,
  canRedeliver,
  onRedeliver,
  redelivering,
}: {
  deliveries: DeliveryRow[];
  canRedeliver: boolean;
  onRedeliver: (id: string) => void;
  redelivering: string | undefined;
}) {
  return (
    <DataTable
      caption="Deliveries to this endpoint, newest first"
      rows={deliveries}
      rowKey={(d) => d.id}
      columns={[
        {
          header: 'Delivery',
          className: 'nowrap',
          cell: (d) => (
            <Link to={`deliveries/${d.id}`} className="mono" aria-label={`Delivery ${d.id}`}>
              {shortId(d.id)}
            </Link>
          ),
        },
        {
          header: 'Signal',
          className: 'nowrap',
          cell: (d) => (
            <Link to={`/signals/${d.signal_id}`} className="mono" title={d.signal_id}>
              {shortId(d.signal_id)}
            </Link>
          ),
        },
        { header: 'Status', cell: (d) => <DeliveryStatusBadge status={d.status} /> },
        { header: 'Attempts', cell: (d) => d.attempts },
        { header: 'Last HTTP status', cell: (d) => d.last_status ?? '—' },
        { header: 'Next retry', className: 'nowrap', cell: (d) => <NextRetry at={d.next_attempt_at} /> },
        { header: 'Created', className: 'nowrap', cell: (d) => <RelativeTime at={d.created_at} /> },
        canRedeliver && {
          ...ACTIONS,
          cell: (d) => (
            <button
              type="button"
              className="button small"
              disabled={redelivering === d.id}
              onClick={() => onRedeliver(d.id)}
            >
              Redeliver
            </button>
          ),
        },
      ]}
    />
  );
}
