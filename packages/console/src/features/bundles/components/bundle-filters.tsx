import { type FormEvent, useId } from 'react';
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
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const text = (name: string) => {
      const v = String(form.get(name) ?? '').trim();
      return v === '' ? undefined : v;
    };
    const day = (name: string, end: boolean) => {
      const v = text(name);
      return v && `${v}T${end ? '23:59:59.999' : '00:00:00.000'}Z`;
    };
    onChange({
      tenant_id: acrossTenants ? text('tenant_id') : undefined,
      agent_id: text('agent_id'),
      trigger: text('trigger') as Filters['trigger'],
      since: day('since', false),
      until: day('until', true),
    });
  };
  return (
    <form className="filters" onSubmit={onSubmit} aria-label="Filter bundles">
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
      <div className="field">
        <label htmlFor={`${id}-since`}>From (UTC)</label>
        <input id={`${id}-since`} name="since" type="date" defaultValue={value.since?.slice(0, 10)} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-until`}>To (UTC)</label>
        <input id={`${id}-until`} name="until" type="date" defaultValue={value.until?.slice(0, 10)} />
      </div>
      <button type="submit" className="button">
        Apply filters
      </button>
    </form>
  );
}
