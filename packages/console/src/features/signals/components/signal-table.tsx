import { Link } from 'react-router';
import { DataTable } from '../../../components/data-table.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
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
    <DataTable
      caption="Signals, newest first"
      rows={signals}
      rowKey={(s) => s.signal_id}
      columns={[
        { header: 'Severity', cell: (s) => <SeverityBadge severity={s.severity} /> },
        {
          header: 'Signal',
          className: 'wrap',
          cell: (s) => (
            <>
              <Link to={`/signals/${s.signal_id}`}>{s.erased_at ? '(payload erased)' : s.description}</Link>
              <div className="mono hint">{s.signal_type}</div>
            </>
          ),
        },
        { header: 'Server', cell: (s) => s.server_name },
        { header: 'Identity', cell: (s) => s.identity_name },
        { header: 'Time', className: 'nowrap', cell: (s) => <RelativeTime at={s.created_at} /> },
      ]}
    />
  );
}
