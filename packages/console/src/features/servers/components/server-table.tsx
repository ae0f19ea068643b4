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
  detectors: DetectorStatus[] | null;
  spool_depth: number | null;
  last_signal_at: string | null;
}

export interface DetectorStatus {
  name: string;
  state: string;
  reason?: string;
  last_event_at?: string;
}

const DETECTOR_TONE: Record<string, string> = { running: 'ok', failed: 'danger', disabled: 'neutral' };

/**
 * Each detector the daemon reported: its state, why it failed (also on hover), its last event;
 * then the spool, if signals wait in it, and when the server's newest signal came.
 */
function Detectors({ server }: { server: ServerRow }) {
  return (
    <ul className="detectors">
      {server.detectors === null && <li className="hint">detectors not reported</li>}
      {server.detectors?.map((d) => (
        <li key={d.name} title={d.reason}>
          <span className="mono">{d.name}</span>{' '}
          <span className={`badge ${DETECTOR_TONE[d.state] ?? 'neutral'}`}>{d.state}</span>
          {d.reason && <div className="hint">{d.reason}</div>}
          {d.last_event_at && (
            <div className="hint">
              last event <RelativeTime at={d.last_event_at} />
            </div>
          )}
        </li>
      ))}
      {server.spool_depth !== null && server.spool_depth > 0 && (
        <li className="hint">{server.spool_depth} signal(s) waiting in the spool</li>
      )}
      <li className="hint">
        last signal <RelativeTime at={server.last_signal_at} empty="none yet" />
      </li>
    </ul>
  );
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
            <th scope="col">Detection</th>
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
                <td>
                  <Detectors server={s} />
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
