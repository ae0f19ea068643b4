import { Link } from 'react-router';
import { DataTable } from '../../../components/data-table.tsx';
import { DeliveryStatusBadge } from '../../../components/delivery-status.tsx';
import { NextRetry } from '../../../components/next-retry.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { shortId } from '../../../lib/short-id.ts';
import { WEBHOOKS_PATH } from './webhooks-nav.tsx';

export interface DeliveryLogRow {
  id: string;
  endpoint_id: string;
  endpoint_name: string;
  signal_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status: number | null;
  next_attempt_at: string | null;
  created_at: string;
}

/** Every endpoint's deliveries: each links to its page (attempts, request, response), its endpoint and its signal. */
export function DeliveryLogTable({ deliveries }: { deliveries: DeliveryLogRow[] }) {
  return (
    <DataTable
      caption="Deliveries to every endpoint, newest first"
      rows={deliveries}
      rowKey={(d) => d.id}
      columns={[
        {
          header: 'Delivery',
          className: 'nowrap',
          cell: (d) => (
            <Link
              to={`${WEBHOOKS_PATH}/${d.endpoint_id}/deliveries/${d.id}`}
              className="mono"
              aria-label={`Delivery ${d.id}`}
            >
              {shortId(d.id)}
            </Link>
          ),
        },
        { header: 'Event', className: 'mono nowrap', cell: (d) => d.event_type },
        {
          header: 'Endpoint',
          className: 'wrap',
          cell: (d) => <Link to={`${WEBHOOKS_PATH}/${d.endpoint_id}`}>{d.endpoint_name}</Link>,
        },
        {
          header: 'Signal',
          className: 'nowrap',
          cell: (d) =>
            d.event_type === 'signal_created' ? (
              <Link to={`/signals/${d.signal_id}`} className="mono" title={d.signal_id}>
                {shortId(d.signal_id)}
              </Link>
            ) : (
              <span className="mono" title={d.signal_id}>
                {shortId(d.signal_id)}
              </span>
            ),
        },
        { header: 'Status', cell: (d) => <DeliveryStatusBadge status={d.status} /> },
        { header: 'Attempts', cell: (d) => d.attempts },
        { header: 'HTTP', cell: (d) => d.last_status ?? '—' },
        { header: 'Next retry', className: 'nowrap', cell: (d) => <NextRetry at={d.next_attempt_at} /> },
        { header: 'Created', className: 'nowrap', cell: (d) => <RelativeTime at={d.created_at} /> },
      ]}
    />
  );
}
