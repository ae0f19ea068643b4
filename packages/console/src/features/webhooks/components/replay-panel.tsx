// "Replay failed deliveries since …": pick a time (and which deliveries), see how many would
// be sent again (the server's dry run) before confirming, then follow the replay's progress
// and cancel it if need be. Admins only; members see the replays' progress.

import { type FormEvent, useId, useState } from 'react';
import { WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { type ReplayFilter, useCancelReplay, useReplayCount, useReplays, useStartReplay } from '../api/replays.ts';

type Replay = NonNullable<ReturnType<typeof useReplays>['data']>['replays'][number];

/** The value of a datetime-local input for a time (local clock, minutes). */
function localInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

const WHICH = { failed: 'failed', succeeded: 'succeeded', all: 'failed and succeeded' } as const;

function Progress({ replay, canWrite, endpointId }: { replay: Replay; canWrite: boolean; endpointId: string }) {
  const cancel = useCancelReplay(endpointId);
  const running = replay.state === 'running';
  const pct = replay.total === 0 ? 100 : Math.round((replay.sent / replay.total) * 100);
  return (
    <div className="replay">
      <p>
        {running ? 'Replaying' : replay.state === 'cancelled' ? 'Cancelled replay of' : 'Replayed'}{' '}
        {WHICH[(replay.status ?? 'all') as keyof typeof WHICH]} deliveries since <RelativeTime at={replay.since} />:{' '}
        <strong>{replay.sent.toLocaleString('en-US')}</strong> of {replay.total.toLocaleString('en-US')} sent
        {running && `, ${replay.remaining.toLocaleString('en-US')} to go`}
        {replay.skipped > 0 && ` (${replay.skipped} changed meanwhile and were left out)`}
        {replay.error && ` — ${replay.error}`}.
      </p>
      <progress
        max={Math.max(1, replay.total)}
        value={replay.sent}
        aria-label={`Replay progress: ${replay.sent} of ${replay.total} sent`}
      >
        {pct} %
      </progress>
      <WriteError error={cancel.error} />
      {running && canWrite && (
        <button type="button" className="button" disabled={cancel.isPending} onClick={() => cancel.mutate(replay.id)}>
          Cancel replay
        </button>
      )}
    </div>
  );
}

export function ReplayPanel({
  endpointId,
  enabled,
  canWrite,
}: {
  endpointId: string;
  enabled: boolean;
  canWrite: boolean;
}) {
  const sinceId = useId();
  const whichId = useId();
  const [since, setSince] = useState(() => localInput(Date.now() - 24 * 3_600_000));
  const [which, setWhich] = useState<keyof typeof WHICH>('failed');
  const replays = useReplays(endpointId);
  const count = useReplayCount(endpointId);
  const start = useStartReplay(endpointId);
  const latest = replays.data?.replays[0];
  const running = latest?.state === 'running';
  const filter = (): ReplayFilter => ({
    since: new Date(since).toISOString(),
    status: which === 'all' ? undefined : which,
  });
  const counted = count.data;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    start.reset();
    count.mutate(filter());
  };
  return (
    <section className="card" aria-labelledby="replay-heading">
      <h2 id="replay-heading">Replay</h2>
      <p className="hint">
        Sends deliveries again with their original Guard-Delivery id, a few at a time behind live traffic.
      </p>
      {latest && <Progress replay={latest} canWrite={canWrite} endpointId={endpointId} />}
      {canWrite && !running && (
        <form className="replay-form" onSubmit={submit}>
          <div className="filters">
            <div className="field">
              <label htmlFor={whichId}>Deliveries</label>
              <select
                id={whichId}
                value={which}
                onChange={(e) => {
                  count.reset();
                  setWhich(e.target.value as keyof typeof WHICH);
                }}
              >
                <option value="failed">Failed</option>
                <option value="succeeded">Succeeded</option>
                <option value="all">Failed and succeeded</option>
              </select>
            </div>
            <div className="field wide">
              <label htmlFor={sinceId}>Replay {WHICH[which]} deliveries since</label>
              <input
                id={sinceId}
                type="datetime-local"
                value={since}
                required
                onChange={(e) => {
                  count.reset();
                  setSince(e.target.value);
                }}
              />
            </div>
          </div>
          <WriteError error={count.error ?? start.error} />
          {!counted ? (
            <button type="submit" className="button" disabled={!enabled || count.isPending || since === ''}>
              Count deliveries
            </button>
          ) : counted.count === 0 ? (
            <p role="status">No {WHICH[which]} deliveries since then: nothing to replay.</p>
          ) : (
            <fieldset className="notice warn confirm">
              <legend className="visually-hidden">Confirm the replay</legend>
              <p role="status">
                {counted.count.toLocaleString('en-US')} {WHICH[which]} {counted.count === 1 ? 'delivery' : 'deliveries'}{' '}
                will be sent again.
              </p>
              <div className="actions">
                <button
                  type="button"
                  className="button primary"
                  disabled={start.isPending}
                  onClick={() =>
                    start.mutate(
                      { since: counted.since, status: counted.status, until: counted.until },
                      { onSuccess: () => count.reset() },
                    )
                  }
                >
                  Replay {counted.count.toLocaleString('en-US')} {counted.count === 1 ? 'delivery' : 'deliveries'}
                </button>
                <button type="button" className="button" onClick={() => count.reset()}>
                  Cancel
                </button>
              </div>
            </fieldset>
          )}
          {!enabled && <p className="hint">Enable the endpoint to replay its deliveries.</p>}
        </form>
      )}
    </section>
  );
}
