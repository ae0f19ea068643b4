// Settings > Data retention (admin): how many days the tenant's webhook delivery log and its
// support bundles are kept, each within the server's maximum. The server audits each change and
// refuses more than the maximum.

import { type FormEvent, type ReactNode, useId, useState } from 'react';
import { Page } from '../../../components/page.tsx';
import { BlockSkeleton, ErrorNotice, WriteError } from '../../../components/query-states.tsx';
import { plural } from '../../../lib/plural.ts';
import { Gate } from '../../auth/index.ts';
import { type RetentionField, useRetention, useUpdateRetention } from '../api/retention.ts';

type Settings = NonNullable<ReturnType<typeof useRetention>['data']>;

/** What one retention card shows of the settings. */
interface Retention {
  days: number;
  isDefault: boolean;
  defaultDays: number;
  maxDays: number;
}

const RETENTIONS: Record<
  RetentionField,
  { title: string; what: string; explain: ReactNode; of: (s: Settings) => Retention }
> = {
  delivery_retention_days: {
    title: 'Webhook delivery log',
    what: 'the delivery log',
    explain:
      "Attempts (with the receiver's response excerpt, error and signature) and completed deliveries are deleted once they are older than this. Signals themselves are kept; an admin erases one signal's payload from its page.",
    of: (s) => ({
      days: s.delivery_retention_days,
      isDefault: s.delivery_retention_is_default,
      defaultDays: s.delivery_retention_default_days,
      maxDays: s.delivery_retention_max_days,
    }),
  },
  bundle_retention_days: {
    title: 'Support bundles',
    what: 'support bundles',
    explain:
      'Bundles older than this are deleted: their file leaves storage and their findings go. Support staff then see only that a bundle was deleted, and when. An admin deletes one bundle at once from its page.',
    of: (s) => ({
      days: s.bundle_retention_days,
      isDefault: s.bundle_retention_is_default,
      defaultDays: s.bundle_retention_default_days,
      maxDays: s.bundle_retention_max_days,
    }),
  },
};

function RetentionForm({ field, settings }: { field: RetentionField; settings: Settings }) {
  const id = useId();
  const update = useUpdateRetention(field);
  const [days, setDays] = useState<string>();
  const kind = RETENTIONS[field];
  const s = kind.of(settings);
  const shown = days ?? String(s.days);
  const n = Number(shown);
  const invalid = !Number.isInteger(n) || n < 1 || n > s.maxDays;
  const save = (e: FormEvent) => {
    e.preventDefault();
    if (!invalid) update.mutate(n, { onSuccess: () => setDays(undefined) });
  };
  const headingId = `${id}-heading`;
  return (
    <section className="card" aria-labelledby={headingId}>
      <h2 id={headingId}>{kind.title}</h2>
      <p>{kind.explain}</p>
      <form onSubmit={save} noValidate aria-label={`${kind.title} retention`}>
        <div className="inline-form">
          <div className="field">
            <label htmlFor={id}>Retention (days)</label>
            <input
              id={id}
              type="number"
              inputMode="numeric"
              min={1}
              max={s.maxDays}
              value={shown}
              aria-invalid={invalid}
              aria-describedby={`${id}-hint`}
              onChange={(e) => setDays(e.target.value)}
            />
          </div>
          <button type="submit" className="button primary" disabled={update.isPending || invalid}>
            Save retention
          </button>
          {!s.isDefault && (
            <button type="button" className="button" disabled={update.isPending} onClick={() => update.mutate(null)}>
              Use the server default
            </button>
          )}
        </div>
        <p className="hint" id={`${id}-hint`}>
          From 1 to {plural(s.maxDays, 'day')} (this server's maximum).{' '}
          {s.isDefault
            ? `Now the server's default, ${plural(s.defaultDays, 'day')}.`
            : `The server's default is ${plural(s.defaultDays, 'day')}.`}
        </p>
      </form>
      <WriteError error={update.error} />
      {update.isSuccess && (
        <p className="notice ok" role="status">
          Saved: {kind.what} {kind.what.endsWith('s') ? 'are' : 'is'} kept {plural(kind.of(update.data).days, 'day')}.
          The change is in the audit log.
        </p>
      )}
    </section>
  );
}

function RetentionForms() {
  const settings = useRetention();
  if (settings.isPending) return <BlockSkeleton height="10rem" label="the retention settings" />;
  if (settings.isError)
    return <ErrorNotice error={settings.error} what="the retention settings" onRetry={() => settings.refetch()} />;
  return (
    <>
      <RetentionForm field="delivery_retention_days" settings={settings.data} />
      <RetentionForm field="bundle_retention_days" settings={settings.data} />
    </>
  );
}

export function DataRetentionPage() {
  return (
    <Gate permission="manageRetention">
      <Page
        title="Data retention"
        description="How long Guard keeps what it records of your webhook deliveries, and your support bundles."
      >
        <RetentionForms />
      </Page>
    </Gate>
  );
}

export default DataRetentionPage;
