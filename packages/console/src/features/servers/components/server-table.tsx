import { DataTable } from '../../../components/data-table.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { plural } from '../../../lib/plural.ts';

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
        <li className="hint">{plural(server.spool_depth, 'signal')} waiting in the spool</li>
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

function ServerState({ server }: { server: ServerRow }) {
  const st = state(server);
  return (
    <>
      <span className={`badge ${st.tone}`}>{st.label}</span>
      {server.last_heartbeat_at === null && !server.revoked_at && <div className="hint">no daemon heartbeat yet</div>}
    </>
  );
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
  /** The servers ticked for a batch (fleets); undefined: no checkbox column. */
  selected?: ReadonlySet<string>;
  onSelect?: (server: ServerRow, on: boolean) => void;
}

export function ServerTable({
  servers,
  showTenant,
  canRequest,
  requesting,
  onRequest,
  selected,
  onSelect,
}: ServerTableProps) {
  return (
    <DataTable
      caption="Enrolled servers"
      rows={servers}
      rowKey={(s) => s.id}
      columns={[
        selected !== undefined && {
          header: 'Select',
          headerHidden: true,
          cell: (s) => (
            <input
              type="checkbox"
              aria-label={`Select ${s.hostname}`}
              checked={selected.has(s.id)}
              onChange={(e) => onSelect?.(s, e.target.checked)}
            />
          ),
        },
        {
          header: 'Hostname',
          className: 'wrap',
          cell: (s) => (
            <>
              {s.hostname}
              <div className="mono hint">{s.id}</div>
            </>
          ),
        },
        showTenant && { header: 'Tenant', className: 'mono', cell: (s) => s.tenant_id },
        { header: 'State', cell: (s) => <ServerState server={s} /> },
        { header: 'Environment', cell: (s) => s.environment || '—' },
        { header: 'Agent version', className: 'mono', cell: (s) => s.agent_version },
        { header: 'Enrolled', className: 'nowrap', cell: (s) => <RelativeTime at={s.enrolled_at} /> },
        { header: 'Last seen', className: 'nowrap', cell: (s) => <RelativeTime at={s.last_seen_at} empty="never" /> },
        { header: 'Detection', cell: (s) => <Detectors server={s} /> },
        {
          header: 'Support bundle',
          className: 'nowrap',
          cell: (s) =>
            s.active_request ? (
              <span className="badge info">{s.active_request.state}</span>
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
            ),
        },
      ]}
    />
  );
}
