import { useId } from 'react';
import { DateRangeFields, FilterForm } from '../../../components/filter-form.tsx';
import { SEVERITIES } from '../../../lib/severity.ts';
import { type SignalFilters as Filters, useServerChoices } from '../api/signals.ts';

/** Filters of the signals list; applied on submit so typing does not fetch on each key. */
export function SignalFilters({ value, onChange }: { value: Filters; onChange: (f: Filters) => void }) {
  const id = useId();
  const servers = useServerChoices().data?.servers ?? [];
  return (
    <FilterForm
      label="Filter signals"
      onApply={({ text, day }) => {
        const severity = text('severity_min');
        onChange({
          severity_min: severity ? Number(severity) : undefined,
          signal_type: text('signal_type'),
          server_id: text('server_id'),
          since: day('since', 'start'),
          until: day('until', 'end'),
        });
      }}
    >
      <div className="field">
        <label htmlFor={`${id}-sev`}>Minimum severity</label>
        <select id={`${id}-sev`} name="severity_min" defaultValue={value.severity_min ?? ''}>
          <option value="">Any</option>
          {SEVERITIES.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label} ({s.value})
            </option>
          ))}
        </select>
      </div>
      <div className="field wide">
        <label htmlFor={`${id}-type`}>Signal type</label>
        <input
          id={`${id}-type`}
          name="signal_type"
          defaultValue={value.signal_type}
          placeholder="sudo_command_executed"
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-server`}>Server</label>
        <select id={`${id}-server`} name="server_id" defaultValue={value.server_id ?? ''}>
          <option value="">Any</option>
          {value.server_id && !servers.some((s) => s.id === value.server_id) && (
            <option value={value.server_id}>{value.server_id}</option>
          )}
          {servers.map((s) => (
            <option key={s.id} value={s.id}>
              {s.hostname}
            </option>
          ))}
        </select>
      </div>
      <DateRangeFields since={value.since} until={value.until} />
    </FilterForm>
  );
}
