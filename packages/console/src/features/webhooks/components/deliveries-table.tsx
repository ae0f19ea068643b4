import { Link } from 'react-router';
import { DeliveryStatusBadge } from '../../../components/delivery-status.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TableWrap } from '../../../components/table-wrap.tsx';

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
    <TableWrap>
      <table>
        <caption className="visually-hidden">Deliveries to this endpoint, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Delivery</th>
            <th scope="col">Signal</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last HTTP status</th>
            <th scope="col">Next retry</th>
            <th scope="col">Created</th>
            {canRedeliver && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id}>
              <td className="nowrap">
                <Link to={`deliveries/${d.id}`} className="mono" aria-label={`Delivery ${d.id}`}>
                  {d.id.slice(0, 8)}
                </Link>
              </td>
              <td className="nowrap">
                <Link to={`/signals/${d.signal_id}`} className="mono">
                  {d.signal_id.slice(0, 14)}
                </Link>
              </td>
              <td>
                <DeliveryStatusBadge status={d.status} />
              </td>
              <td>{d.attempts}</td>
              <td>{d.last_status ?? '—'}</td>
              <td className="nowrap">
                <RelativeTime at={d.next_attempt_at} />
              </td>
              <td className="nowrap">
                <RelativeTime at={d.created_at} />
              </td>
              {canRedeliver && (
                <td>
                  <button
                    type="button"
                    className="button small"
                    disabled={redelivering === d.id}
                    onClick={() => onRedeliver(d.id)}
                  >
                    Redeliver
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
