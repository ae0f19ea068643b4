import { RelativeTime } from '../../../components/relative-time.tsx';
import { TableWrap } from '../../../components/table-wrap.tsx';

export interface ServerRow {
  id: string;
  hostname: string;
  environment: string;
  agent_version: string;
  enrolled_at: string;
  last_seen_at: string | null;
  online: boolean;
  revoked_at: string | null;
}

function state(s: ServerRow): { label: string; tone: string } {
  if (s.revoked_at) return { label: 'revoked', tone: 'danger' };
  return s.online ? { label: 'online', tone: 'ok' } : { label: 'offline', tone: 'neutral' };
}

export function ServerTable({ servers }: { servers: ServerRow[] }) {
  return (
    <TableWrap>
      <table>
        <caption className="visually-hidden">Enrolled servers</caption>
        <thead>
          <tr>
            <th scope="col">Hostname</th>
            <th scope="col">State</th>
            <th scope="col">Environment</th>
            <th scope="col">Agent version</th>
            <th scope="col">Enrolled</th>
            <th scope="col">Last seen</th>
          </tr>
        </thead>
        <tbody>
          {servers.map((s) => {
            const st = state(s);
            return (
              <tr key={s.id}>
                <td className="wrap">
                  {s.hostname}
                  <div className="mono hint">{s.id}</div>
                </td>
                <td>
                  <span className={`badge ${st.tone}`}>{st.label}</span>
                </td>
                <td>{s.environment || '—'}</td>
                <td className="mono">{s.agent_version}</td>
                <td className="nowrap">
                  <RelativeTime at={s.enrolled_at} />
                </td>
                <td className="nowrap">
                  <RelativeTime at={s.last_seen_at} empty="never" />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableWrap>
  );
}
