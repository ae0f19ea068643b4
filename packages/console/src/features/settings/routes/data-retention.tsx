// Settings > Data retention (admin): how many days the tenant's webhook delivery log is kept,
// within the server's maximum. The server audits each change and refuses more than the maximum.

import { type FormEvent, useId, useState } from 'react';
import { Page } from '../../../components/page.tsx';
import { BlockSkeleton, ErrorNotice, WriteError } from '../../../components/query-states.tsx';
import { plural } from '../../../lib/plural.ts';
import { Gate } from '../../auth/index.ts';
import { useRetention, useUpdateRetention } from '../api/retention.ts';

function RetentionForm() {
  const id = useId();
  const settings = useRetention();
  const update = useUpdateRetention();
  const [days, setDays] = useState<string>();
  if (settings.isPending) return <BlockSkeleton height="10rem" label="the retention setting" />;
  if (settings.isError)
    return <ErrorNotice error={settings.error} what="the retention setting" onRetry={() => settings.refetch()} />;
  const s = settings.data;
  const shown = days ?? String(s.delivery_retention_days);
  const n = Number(shown);
  const invalid = !Number.isInteger(n) || n < 1 || n > s.delivery_retention_max_days;
  const save = (e: FormEvent) => {
    e.preventDefault();
    if (!invalid) update.mutate(n, { onSuccess: () => setDays(undefined) });
  };
  return (
    <section className="card" aria-labelledby="retention-heading">
      <h2 id="retention-heading">Webhook delivery log</h2>
      <p>
        Attempts (with the receiver's response excerpt, error and signature) and completed deliveries are deleted once
        they are older than this. Signals themselves are kept; an admin erases one signal's payload from its page.
      </p>
      <form onSubmit={save} noValidate>
        <div className="inline-form">
          <div className="field">
            <label htmlFor={id}>Retention (days)</label>
            <input
              id={id}
              type="number"
              inputMode="numeric"
              min={1}
              max={s.delivery_retention_max_days}
              value={shown}
              aria-invalid={invalid}
              aria-describedby={`${id}-hint`}
              onChange={(e) => setDays(e.target.value)}
            />
          </div>
          <button type="submit" className="button primary" disabled={update.isPending || invalid}>
            Save retention
          </button>
          {!s.delivery_retention_is_default && (
            <button type="button" className="button" disabled={update.isPending} onClick={() => update.mutate(null)}>
              Use the server default
            </button>
          )}
        </div>
        <p className="hint" id={`${id}-hint`}>
          From 1 to {plural(s.delivery_retention_max_days, 'day')} (this server's maximum).{' '}
          {s.delivery_retention_is_default
            ? `Now the server's default, ${plural(s.delivery_retention_default_days, 'day')}.`
            : `The server's default is ${plural(s.delivery_retention_default_days, 'day')}.`}
        </p>
      </form>
      <WriteError error={update.error} />
      {update.isSuccess && (
        <p className="notice ok" role="status">
          Saved: the delivery log is kept {plural(update.data.delivery_retention_days, 'day')}. The change is in the
          audit log.
        </p>
      )}
    </section>
  );
}

export function DataRetentionPage() {
  return (
    <Gate permission="manageRetention">
      <Page title="Data retention" description="How long Guard keeps what it records of your webhook deliveries.">
        <RetentionForm />
      </Page>
    </Gate>
  );
}

export default DataRetentionPage;
