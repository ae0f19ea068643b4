import { useId } from 'react';
import { DateRangeFields, FilterForm } from '../../../components/filter-form.tsx';
import { type BundleFilters as Filters, useServerChoices } from '../api/bundles.ts';

export function BundleFilters({
  value,
  onChange,
  acrossTenants,
}: {
  value: Filters;
  onChange: (f: Filters) => void;
  acrossTenants: boolean;
}) {
  const id = useId();
  const servers = useServerChoices(!acrossTenants).data?.servers ?? [];
  return (
    <FilterForm
      label="Filter bundles"
      onApply={({ text, day }) =>
        onChange({
          tenant_id: acrossTenants ? text('tenant_id') : undefined,
          agent_id: text('agent_id'),
          trigger: text('trigger') as Filters['trigger'],
          since: day('since', 'start'),
          until: day('until', 'end'),
        })
      }
    >
      {acrossTenants && (
        <div className="field">
          <label htmlFor={`${id}-tenant`}>Tenant ID</label>
          <input id={`${id}-tenant`} name="tenant_id" defaultValue={value.tenant_id} />
        </div>
      )}
      {acrossTenants ? (
        <div className="field">
          <label htmlFor={`${id}-agent`}>Server ID</label>
          <input id={`${id}-agent`} name="agent_id" defaultValue={value.agent_id} />
        </div>
      ) : (
        <div className="field">
          <label htmlFor={`${id}-agent`}>Server</label>
          <select id={`${id}-agent`} name="agent_id" defaultValue={value.agent_id ?? ''}>
            <option value="">Any</option>
            {servers.map((s) => (
              <option key={s.id} value={s.id}>
                {s.hostname}
              </option>
            ))}
          </select>
        </div>
      )}
      <div className="field">
        <label htmlFor={`${id}-trigger`}>Trigger</label>
        <select id={`${id}-trigger`} name="trigger" defaultValue={value.trigger ?? ''}>
          <option value="">Any</option>
          <option value="cli">cli</option>
          <option value="console_push">console_push</option>
        </select>
      </div>
      <DateRangeFields since={value.since} until={value.until} />
    </FilterForm>
  );
}
