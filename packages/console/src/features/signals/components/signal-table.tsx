import { Link } from 'react-router';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TableWrap } from '../../../components/table-wrap.tsx';
import { SeverityBadge } from './severity-badge.tsx';

export interface SignalRow {
  signal_id: string;
  signal_type: string;
  severity: number;
  description: string;
  server_name: string;
  identity_name: string;
  created_at: string;
  /** Set once the payload was erased on request. */
  erased_at?: string | null;
}

export function SignalTable({ signals }: { signals: SignalRow[] }) {
  return (
    <TableWrap>
      <table>
        <caption className="visually-hidden">Signals, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Severity</th>
            <th scope="col">Signal</th>
            <th scope="col">Server</th>
            <th scope="col">Identity</th>
            <th scope="col">Time</th>
          </tr>
        </thead>
        <tbody>
          {signals.map((s) => (
            <tr key={s.signal_id}>
              <td>
                <SeverityBadge severity={s.severity} />
              </td>
              <td className="wrap">
                <Link to={`/signals/${s.signal_id}`}>{s.erased_at ? '(payload erased)' : s.description}</Link>
                <div className="mono hint">{s.signal_type}</div>
              </td>
              <td>{s.server_name}</td>
              <td>{s.identity_name}</td>
              <td className="nowrap">
                <RelativeTime at={s.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
