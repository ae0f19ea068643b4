// The filter bar above a list. Filters apply on submit, so typing does not fetch on each key;
// the page keys the form by its filters, so the fields show what the URL says.

import { type FormEvent, type ReactNode, useId } from 'react';

/** The submitted fields: a trimmed text (undefined when empty), a date as the start or end of its UTC day. */
export interface FilterFields {
  text(name: string): string | undefined;
  day(name: string, end: 'start' | 'end'): string | undefined;
}

export function FilterForm({
  label,
  onApply,
  children,
}: {
  label: string;
  onApply: (fields: FilterFields) => void;
  children: ReactNode;
}) {
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim() || undefined;
    const day = (name: string, end: 'start' | 'end') => {
      const v = text(name);
      return v && `${v}T${end === 'end' ? '23:59:59.999' : '00:00:00.000'}Z`;
    };
    onApply({ text, day });
  };
  return (
    <form className="filters" onSubmit={onSubmit} aria-label={label}>
      {children}
      <button type="submit" className="button">
        Apply filters
      </button>
    </form>
  );
}

/** From and To (UTC) dates, named `since` and `until`; read them with `day('since', 'start')`, `day('until', 'end')`. */
export function DateRangeFields({ since, until }: { since: string | undefined; until: string | undefined }) {
  const id = useId();
  return (
    <>
      <div className="field">
        <label htmlFor={`${id}-since`}>From (UTC)</label>
        <input id={`${id}-since`} name="since" type="date" defaultValue={since?.slice(0, 10)} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-until`}>To (UTC)</label>
        <input id={`${id}-until`} name="until" type="date" defaultValue={until?.slice(0, 10)} />
      </div>
    </>
  );
}
