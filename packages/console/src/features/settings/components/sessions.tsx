import { ErrorNotice, TableSkeleton, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TableWrap } from '../../../components/table-wrap.tsx';
import { useRevokeSession, useSessions } from '../api/account.ts';

export function Sessions() {
  const sessions = useSessions();
  const revoke = useRevokeSession();
  return (
    <section className="card" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      <p>Browsers signed in as you. Sign one out if you do not recognise it, then change your password.</p>
      <WriteError error={revoke.error} />
      {sessions.isPending ? (
        <TableSkeleton columns={4} rows={2} label="sessions" />
      ) : sessions.isError ? (
        <ErrorNotice error={sessions.error} what="your sessions" onRetry={() => sessions.refetch()} />
      ) : (
        <TableWrap>
          <table>
            <caption className="visually-hidden">Your sessions</caption>
            <thead>
              <tr>
                <th scope="col">Browser</th>
                <th scope="col">Address</th>
                <th scope="col">Signed in</th>
                <th scope="col">Last active</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sessions.data.sessions.map((s) => (
                <tr key={s.id}>
                  <td className="wrap">
                    {s.user_agent || 'unknown'}
                    {s.current && <span className="badge info">this browser</span>}
                  </td>
                  <td className="mono">{s.ip ?? '—'}</td>
                  <td className="nowrap">
                    <RelativeTime at={s.created_at} />
                  </td>
                  <td className="nowrap">
                    <RelativeTime at={s.last_seen_at} />
                  </td>
                  <td>
                    {!s.current && (
                      <button
                        type="button"
                        className="button small"
                        disabled={revoke.isPending}
                        onClick={() => revoke.mutate(s.id)}
                      >
                        End session
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}
