import { useId } from 'react';
import { DELIVERY_STATUSES } from '../../../components/delivery-status.tsx';
import { DateRangeFields, FilterForm } from '../../../components/filter-form.tsx';
import type { DeliveryLogFilters as Filters, Status } from '../api/deliveries.ts';

/** The delivery log's search: a signal id, an endpoint, a status word, creation dates; applied on submit. */
export function DeliveryLogFilters({
  value,
  endpoints,
  onChange,
}: {
  value: Filters;
  endpoints: readonly { id: string; name: string }[];
  onChange: (f: Filters) => void;
}) {
  const id = useId();
  return (
    <FilterForm
      label="Search deliveries"
      onApply={({ text, day }) =>
        onChange({
          signal_id: text('signal_id'),
          endpoint_id: text('endpoint_id'),
          status: text('status') as Status | undefined,
          since: day('since', 'start'),
          until: day('until', 'end'),
        })
      }
    >
      <div className="field wide">
        <label htmlFor={`${id}-signal`}>Signal or event ID</label>
        <input
          id={`${id}-signal`}
          name="signal_id"
          defaultValue={value.signal_id}
          placeholder="sig_…"
          spellCheck={false}
          autoComplete="off"
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-endpoint`}>Endpoint</label>
        <select id={`${id}-endpoint`} name="endpoint_id" defaultValue={value.endpoint_id ?? ''}>
          <option value="">Any</option>
          {value.endpoint_id && !endpoints.some((e) => e.id === value.endpoint_id) && (
            <option value={value.endpoint_id}>{value.endpoint_id}</option>
          )}
          {endpoints.map((e) => (
            <option key={e.id} value={e.id}>
              {e.name}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-status`}>Status</label>
        <select id={`${id}-status`} name="status" defaultValue={value.status ?? ''}>
          <option value="">Any</option>
          {DELIVERY_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <DateRangeFields since={value.since} until={value.until} />
    </FilterForm>
  );
}
