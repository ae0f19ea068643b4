import { ACTIONS, DataTable } from '../../../components/data-table.tsx';
import { QueryView, TableSkeleton, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { useRevokeSession, useSessions } from '../api/account.ts';

export function Sessions() {
  const sessions = useSessions();
  const revoke = useRevokeSession();
  return (
    <section className="card" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      <p>Browsers signed in as you. Sign one out if you do not recognise it, then change your password.</p>
      <WriteError error={revoke.error} />
      <QueryView
        query={sessions}
        what="your sessions"
        pending={<TableSkeleton columns={4} rows={2} label="sessions" />}
      >
        {(data) => (
          <DataTable
            caption="Your sessions"
            rows={data.sessions}
            rowKey={(s) => s.id}
            columns={[
              {
                header: 'Browser',
                className: 'wrap',
                cell: (s) => (
                  <>
                    {s.user_agent || 'unknown'}
                    {s.current && <span className="badge info">this browser</span>}
                  </>
                ),
              },
              { header: 'Address', className: 'mono', cell: (s) => s.ip ?? '—' },
              { header: 'Signed in', className: 'nowrap', cell: (s) => <RelativeTime at={s.created_at} /> },
              { header: 'Last active', className: 'nowrap', cell: (s) => <RelativeTime at={s.last_seen_at} /> },
              {
                ...ACTIONS,
                cell: (s) =>
                  !s.current && (
                    <button
                      type="button"
                      className="button small"
                      disabled={revoke.isPending}
                      onClick={() => revoke.mutate(s.id)}
                    >
                      End session
                    </button>
                  ),
              },
            ]}
          />
        )}
      </QueryView>
    </section>
  );
}
