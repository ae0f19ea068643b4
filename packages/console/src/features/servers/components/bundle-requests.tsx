import { Link } from 'react-router';
import { DataTable } from '../../../components/data-table.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { useCan } from '../../auth/index.ts';
import { isOpenRequest } from '../api/servers.ts';

export interface RequestRow {
  id: string;
  server_id: string;
  hostname: string;
  state: string;
  created_at: string;
  finished_at: string | null;
  requested_by_role: string;
  bundle_id?: string;
  error?: { code: string; message: string };
  step?: string;
  reason: string | null;
  /** manual (a person asked), or the tenant's collection schedule: schedule_weekly, critical_signal. */
  trigger?: string;
  signal_id?: string;
}

/** Who asked for it: a person, or the tenant's collection schedule and why. */
function RequestedBy({ r }: { r: RequestRow }) {
  const signals = useCan('readSignals'); // support staff do not read a tenant's signals
  if (r.trigger === 'schedule_weekly') return <div className="hint">by the weekly schedule</div>;
  if (r.trigger === 'critical_signal')
    return (
      <div className="hint">
        by the schedule, on a{' '}
        {r.signal_id && signals ? (
          <Link to={`/signals/${encodeURIComponent(r.signal_id)}`}>critical signal</Link>
        ) : (
          'critical signal'
        )}
      </div>
    );
  return <div className="hint">by {r.requested_by_role === 'support' ? 'support' : 'an admin'}</div>;
}

export const TONES: Record<string, string> = {
  done: 'ok',
  failed: 'danger',
  expired: 'warn',
  interrupted: 'warn',
};

/** What became of a request, in words. */
export function Outcome({ r }: { r: RequestRow }) {
  if (r.state === 'done' && r.bundle_id)
    return <Link to={`/support/bundles/${encodeURIComponent(r.bundle_id)}`}>Open bundle</Link>;
  if (r.state === 'failed')
    return (
      <span className="wrap">
        {r.step ? `The ${r.step} step failed: ` : ''}
        {r.error?.message ?? r.reason}
      </span>
    );
  if (r.reason) return <span className="wrap">{r.reason}</span>;
  return <span className="hint">in progress</span>;
}

/** The newest bundle requests, live while one is open; the newest one's state is announced. */
export function BundleRequests({ requests }: { requests: RequestRow[] }) {
  const newest = requests[0];
  return (
    <section aria-labelledby="bundle-requests">
      <h2 id="bundle-requests">Bundle requests</h2>
      <p role="status" className="hint">
        {newest
          ? `Latest: ${newest.hostname}, ${newest.state}${isOpenRequest(newest.state) ? '…' : '.'}`
          : 'No bundle has been requested yet.'}
      </p>
      <DataTable
        caption="Bundle requests, newest first"
        rows={requests}
        rowKey={(r) => r.id}
        empty={null}
        columns={[
          {
            header: 'Server',
            className: 'wrap',
            cell: (r) => (
              <>
                {r.hostname}
                <div className="mono hint">{r.id}</div>
              </>
            ),
          },
          { header: 'State', cell: (r) => <span className={`badge ${TONES[r.state] ?? 'info'}`}>{r.state}</span> },
          {
            header: 'Requested',
            className: 'nowrap',
            cell: (r) => (
              <>
                <RelativeTime at={r.created_at} />
                <RequestedBy r={r} />
              </>
            ),
          },
          { header: 'Finished', className: 'nowrap', cell: (r) => <RelativeTime at={r.finished_at} /> },
          { header: 'Outcome', cell: (r) => <Outcome r={r} /> },
        ]}
      />
    </section>
  );
}
