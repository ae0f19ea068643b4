import { Link } from 'react-router';
import { DeliveryStatusBadge } from '../../../components/delivery-status.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TableWrap } from '../../../components/table-wrap.tsx';

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
    <TableWrap>
      <table>
        <caption className="visually-hidden">Webhook endpoints</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">URL</th>
            <th scope="col">State</th>
            <th scope="col">Last delivery</th>
            <th scope="col">Failing</th>
          </tr>
        </thead>
        <tbody>
          {endpoints.map((e) => (
            <tr key={e.id}>
              <td className="wrap">
                <Link to={e.id}>{e.name}</Link>
              </td>
              <td className="wrap mono">{e.url}</td>
              <td>
                <span className={`badge ${e.enabled ? 'ok' : 'neutral'}`}>{e.enabled ? 'enabled' : 'disabled'}</span>
              </td>
              <td className="nowrap">
                {e.last_delivery ? (
                  <>
                    <DeliveryStatusBadge status={e.last_delivery.status} /> <RelativeTime at={e.last_delivery.at} />
                  </>
                ) : (
                  'none yet'
                )}
              </td>
              <td className="nowrap">
                {e.failing_since ? (
                  <>
                    <span className="badge danger">failing</span> started <RelativeTime at={e.failing_since} />
                  </>
                ) : (
                  'no'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
