// Settings > Scheduled collection (admin): the tenant's collection_schedule — a bundle from every
// online server once a week (weekday and hour, UTC), and one from a server that raises a critical
// signal (at most one per server per interval). The server audits each change. The schedule only
// makes requests: support access (who else may ask) is the setting on the Servers page, unchanged.

import { type FormEvent, useId, useState } from 'react';
import { Link } from 'react-router';
import { Page } from '../../../components/page.tsx';
import { BlockSkeleton, ErrorNotice, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { plural } from '../../../lib/plural.ts';
import { formatExact } from '../../../lib/relative-time.ts';
import { Gate } from '../../auth/index.ts';
import { type ScheduleChange, useCollectionSchedule, useUpdateCollectionSchedule } from '../api/collection-schedule.ts';
import { useRetention } from '../api/retention.ts';

type Weekday = NonNullable<ScheduleChange['weekly']>['weekday'];
type Schedule = NonNullable<ReturnType<typeof useCollectionSchedule>['data']>;

const WEEKDAYS: Weekday[] = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const HOURS = Array.from({ length: 24 }, (_, h) => h);
const DEFAULT_INTERVAL_HOURS = 24;

const capitalised = (s: string) => s[0].toUpperCase() + s.slice(1);
const hh = (h: number) => `${String(h).padStart(2, '0')}:00`;

/** What the form holds: every field, also those of a part that is off. */
interface Draft {
  weeklyOn: boolean;
  weekday: Weekday;
  hour: number;
  criticalOn: boolean;
  interval: string;
}

function draftOf(s: Schedule): Draft {
  const w = s.collection_schedule.weekly;
  const c = s.collection_schedule.on_critical_signal;
  return {
    weeklyOn: w?.enabled ?? false,
    weekday: (w?.weekday as Weekday | undefined) ?? 'monday',
    hour: w?.hour ?? 6,
    criticalOn: c?.enabled ?? false,
    interval: String(c?.min_interval_hours ?? DEFAULT_INTERVAL_HOURS),
  };
}

function SupportAccessNote() {
  const settings = useRetention();
  const allowed = settings.data?.allow_support_collection;
  return (
    <p className="notice info" id="schedule-consent">
      The schedule only asks your servers for bundles, as an admin’s request would; each request is in your audit log.
      It changes nothing about support access: whether Guard support may ask your servers for bundles stays the{' '}
      <Link to="/servers">Support access</Link> setting on the Servers page
      {allowed === undefined ? '' : allowed ? ' (now: allowed)' : ' (now: not allowed)'}, and who may read bundles is
      unchanged.
    </p>
  );
}

function ScheduleForm({ schedule }: { schedule: Schedule }) {
  const id = useId();
  const update = useUpdateCollectionSchedule();
  const [draft, setDraft] = useState<Draft>(() => draftOf(schedule));
  const set = (change: Partial<Draft>) => setDraft((d) => ({ ...d, ...change }));
  const interval = Number(draft.interval);
  const invalid = !Number.isInteger(interval) || interval < 1 || interval > 720;
  const save = (e: FormEvent) => {
    e.preventDefault();
    if (invalid) return;
    const body: ScheduleChange = {
      weekly: { enabled: draft.weeklyOn, weekday: draft.weekday, hour: draft.hour },
      on_critical_signal: { enabled: draft.criticalOn, min_interval_hours: interval },
    };
    update.mutate(body, { onSuccess: (data) => setDraft(draftOf(data)) });
  };
  const next = (update.data ?? schedule).next_weekly_run_at;
  return (
    <form onSubmit={save} noValidate aria-label="Collection schedule">
      <section className="card" aria-labelledby={`${id}-weekly`}>
        <h2 id={`${id}-weekly`}>Weekly</h2>
        <label className="checkbox">
          <input type="checkbox" checked={draft.weeklyOn} onChange={(e) => set({ weeklyOn: e.target.checked })} />{' '}
          Request a bundle from every online server once a week
        </label>
        <div className="inline-form">
          <div className="field">
            <label htmlFor={`${id}-weekday`}>Weekday</label>
            <select
              id={`${id}-weekday`}
              value={draft.weekday}
              disabled={!draft.weeklyOn}
              onChange={(e) => set({ weekday: e.target.value as Weekday })}
            >
              {WEEKDAYS.map((d) => (
                <option key={d} value={d}>
                  {capitalised(d)}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${id}-hour`}>Hour (UTC)</label>
            <select
              id={`${id}-hour`}
              value={draft.hour}
              disabled={!draft.weeklyOn}
              onChange={(e) => set({ hour: Number(e.target.value) })}
            >
              {HOURS.map((h) => (
                <option key={h} value={h}>
                  {hh(h)}
                </option>
              ))}
            </select>
          </div>
        </div>
        <p className="hint" role="status" aria-label="Next weekly run">
          {next ? (
            <>
              Next weekly run: {formatExact(next)} (<RelativeTime at={next} />
              ). Offline servers, and servers with a request still open, are left out that week.
            </>
          ) : (
            'No weekly run is scheduled.'
          )}
        </p>
      </section>
      <section className="card" aria-labelledby={`${id}-critical`}>
        <h2 id={`${id}-critical`}>On a critical signal</h2>
        <label className="checkbox">
          <input type="checkbox" checked={draft.criticalOn} onChange={(e) => set({ criticalOn: e.target.checked })} />{' '}
          Request a bundle from a server when it raises a critical signal (severity 5)
        </label>
        <div className="inline-form">
          <div className="field">
            <label htmlFor={`${id}-interval`}>At most one per server every (hours)</label>
            <input
              id={`${id}-interval`}
              type="number"
              inputMode="numeric"
              min={1}
              max={720}
              value={draft.interval}
              disabled={!draft.criticalOn}
              aria-invalid={invalid}
              aria-describedby={`${id}-interval-hint`}
              onChange={(e) => set({ interval: e.target.value })}
            />
          </div>
        </div>
        <p className="hint" id={`${id}-interval-hint`}>
          From 1 to 720 hours (default {DEFAULT_INTERVAL_HOURS}). A server that has a request open is not asked again.
        </p>
      </section>
      <SupportAccessNote />
      <div className="inline-form">
        <button type="submit" className="button primary" disabled={update.isPending || invalid}>
          Save schedule
        </button>
      </div>
      <WriteError error={update.error} />
      {update.isSuccess && (
        <p className="notice ok" role="status">
          Saved:{' '}
          {update.data.collection_schedule.weekly?.enabled
            ? `weekly on ${capitalised(update.data.collection_schedule.weekly.weekday)} at ${hh(update.data.collection_schedule.weekly.hour)} UTC`
            : 'no weekly run'}
          ;{' '}
          {update.data.collection_schedule.on_critical_signal?.enabled
            ? `on critical signals, at most one per server every ${plural(update.data.collection_schedule.on_critical_signal.min_interval_hours, 'hour')}`
            : 'not on critical signals'}
          . The change is in the audit log.
        </p>
      )}
    </form>
  );
}

function Schedule() {
  const schedule = useCollectionSchedule();
  if (schedule.isPending) return <BlockSkeleton height="16rem" label="the collection schedule" />;
  if (schedule.isError)
    return <ErrorNotice error={schedule.error} what="the collection schedule" onRetry={() => schedule.refetch()} />;
  return <ScheduleForm schedule={schedule.data} />;
}

export function CollectionSchedulePage() {
  return (
    <Gate permission="manageCollectionSchedule">
      <Page
        title="Scheduled collection"
        description="Support bundles your servers send without anyone asking: once a week, and when a server raises a critical signal."
      >
        <Schedule />
      </Page>
    </Gate>
  );
}

export default CollectionSchedulePage;
