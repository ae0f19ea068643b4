import { DataTable } from '../../../components/data-table.tsx';
import { SEVERITIES } from '../../../lib/severity.ts';
import { type Draft, type PolicyEntry, severityText, shown } from '../policy-draft.ts';

export interface PolicyTableProps {
  entries: readonly PolicyEntry[];
  draft: Draft;
  /** Admins edit; members read (no control is rendered). */
  editable: boolean;
  onChange: (signalType: string, change: { enabled?: boolean; severity?: number | null }) => void;
}

/** The seven detection signal types: on or off, and their severity. */
export function PolicyTable({ entries, draft, editable, onChange }: PolicyTableProps) {
  const rows = entries.map((e) => ({ e, now: shown(e, draft) }));
  return (
    <DataTable
      caption="Detection signal types"
      rows={rows}
      rowKey={({ e }) => e.signal_type}
      columns={[
        {
          header: 'Signal type',
          className: 'wrap',
          cell: ({ e, now }) => (
            <>
              <span className="mono">{e.signal_type}</span>
              {(now.enabled !== e.enabled || now.severity !== e.severity) && (
                <span className="badge info detection-changed">changed</span>
              )}
              <div className="hint">{e.description}</div>
            </>
          ),
        },
        {
          header: 'Enabled',
          className: 'nowrap',
          cell: ({ e, now }) =>
            editable ? (
              <label className="check-row">
                <input
                  type="checkbox"
                  checked={now.enabled}
                  aria-label={`${e.signal_type} enabled`}
                  onChange={(ev) => onChange(e.signal_type, { enabled: ev.target.checked })}
                />{' '}
                {now.enabled ? 'on' : 'off'}
              </label>
            ) : (
              <span className={`badge ${now.enabled ? 'ok' : 'neutral'}`}>{now.enabled ? 'on' : 'off'}</span>
            ),
        },
        {
          header: 'Severity',
          className: 'nowrap',
          cell: ({ e, now }) =>
            editable ? (
              <select
                aria-label={`Severity of ${e.signal_type}`}
                value={now.severity === null ? 'default' : String(now.severity)}
                onChange={(ev) =>
                  onChange(e.signal_type, {
                    severity: ev.target.value === 'default' ? null : Number(ev.target.value),
                  })
                }
              >
                <option value="default">{severityText(null, e.default_severity)}</option>
                {SEVERITIES.map((s) => (
                  <option key={s.value} value={String(s.value)}>
                    {severityText(s.value, e.default_severity)}
                  </option>
                ))}
              </select>
            ) : (
              severityText(now.severity, e.default_severity)
            ),
        },
      ]}
    />
  );
}
