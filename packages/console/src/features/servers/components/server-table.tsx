import { RelativeTime } from '../../../components/relative-time.tsx';
import { TableWrap } from '../../../components/table-wrap.tsx';

export interface ServerRow {
  id: string;
  tenant_id: string;
  hostname: string;
  environment: string;
  agent_version: string;
  enrolled_at: string;
  last_seen_at: string | null;
  online: boolean;
  revoked_at: string | null;
  last_heartbeat_at: string | null;
  active_request: { id: string; state: string; created_at: string } | null;
}

function state(s: ServerRow): { label: string; tone: string } {
  if (s.revoked_at) return { label: 'revoked', tone: 'danger' };
  return s.online ? { label: 'online', tone: 'ok' } : { label: 'offline', tone: 'neutral' };
}

export interface ServerTableProps {
  servers: ServerRow[];
  /** Support staff see every tenant's servers: the tenant is shown. */
  showTenant: boolean;
  /** Whether the user may ask a server for a bundle (the Request support bundle button). */
  canRequest: boolean;
  /** The server whose request is being sent now. */
  requesting: string | undefined;
  onRequest: (server: ServerRow) => void;
}

export function ServerTable({ servers, showTenant, canRequest, requesting, onRequest }: ServerTableProps) {
  return (
    <TableWrap>
      <table>
        <caption className="visually-hidden">Enrolled servers</caption>
        <thead>
          <tr>
            <th scope="col">Hostname</th>
            {showTenant && <th scope="col">Tenant</th>}
            <th scope="col">State</th>
            <th scope="col">Environment</th>
            <th scope="col">Agent version</th>
            <th scope="col">Enrolled</th>
            <th scope="col">Last seen</th>
            <th scope="col">Support bundle</th>
          </tr>
        </thead>
        <tbody>
          {servers.map((s) => {
            const st = state(s);
            const open = s.active_request;
            return (
              <tr key={s.id}>
                <td className="wrap">
                  {s.hostname}
                  <div className="mono hint">{s.id}</div>
                </td>
                {showTenant && <td className="mono">{s.tenant_id}</td>}
                <td>
                  <span className={`badge ${st.tone}`}>{st.label}</span>
                  {s.last_heartbeat_at === null && !s.revoked_at && <div className="hint">no daemon heartbeat yet</div>}
                </td>
                <td>{s.environment || '—'}</td>
                <td className="mono">{s.agent_version}</td>
                <td className="nowrap">
                  <RelativeTime at={s.enrolled_at} />
                </td>
                <td className="nowrap">
                  <RelativeTime at={s.last_seen_at} empty="never" />
                </td>
                <td className="nowrap">
                  {open ? (
                    <span className="badge info">{open.state}</span>
                  ) : canRequest && !s.revoked_at ? (
                    <button
                      type="button"
                      className="button small"
                      disabled={requesting === s.id}
                      onClick={() => onRequest(s)}
                    >
                      Request support bundle
                    </button>
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableWrap>
  );
}
