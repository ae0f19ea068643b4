import { Link } from 'react-router';
import { DataTable } from '../../../components/data-table.tsx';
import { DeliveryStatusBadge } from '../../../components/delivery-status.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';

export interface EndpointRow {
  id: string;
  name: string;
  url: string;
  enabled: boolean;
  failing_since: string | null;
  last_delivery: { status: string; at: string } | null;
}

export function EndpointTable({ endpoints }: { endpoints: EndpointRow[] }) {
  return (
    <DataTable
      caption="Webhook endpoints"
      rows={endpoints}
      rowKey={(e) => e.id}
      columns={[
        { header: 'Name', className: 'wrap', cell: (e) => <Link to={e.id}>{e.name}</Link> },
        { header: 'URL', className: 'wrap mono', cell: (e) => e.url },
        {
          header: 'State',
          cell: (e) => (
            <span className={`badge ${e.enabled ? 'ok' : 'neutral'}`}>{e.enabled ? 'enabled' : 'disabled'}</span>
          ),
        },
        {
          header: 'Last delivery',
          className: 'nowrap',
          cell: (e) =>
            e.last_delivery ? (
              <>
                <DeliveryStatusBadge status={e.last_delivery.status} /> <RelativeTime at={e.last_delivery.at} />
              </>
            ) : (
              'none yet'
            ),
        },
        {
          header: 'Failing',
          className: 'nowrap',
          cell: (e) =>
            e.failing_since ? (
              <>
                <span className="badge danger">failing</span> started <RelativeTime at={e.failing_since} />
              </>
            ) : (
              'no'
            ),
        },
      ]}
    />
  );
}
