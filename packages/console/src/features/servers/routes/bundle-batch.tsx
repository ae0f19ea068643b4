// A bundle batch (fleets): its progress, the requests counted by state, and each server's
// request with a link to its bundle when done: the batch's bundles listed together. Followed
// live while a request is open.

import { useParams } from 'react-router';
import { DataTable } from '../../../components/data-table.tsx';
import { Page } from '../../../components/page.tsx';
import { BlockSkeleton, QueryView } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { gated } from '../../auth/index.ts';
import { type BatchShape, finishedOf, useBatch } from '../api/batches.ts';
import { isOpenRequest } from '../api/servers.ts';
import { Outcome, TONES } from '../components/bundle-requests.tsx';
import { skippedSummary } from '../components/fleet-actions.tsx';
import { describeFilter } from '../components/recent-batches.tsx';

const STATES = ['queued', 'delivered', 'collecting', 'uploading', 'done', 'failed', 'expired', 'interrupted'];

function Progress({ batch }: { batch: BatchShape }) {
  const { progress } = batch;
  const finished = finishedOf(progress);
  const open = batch.requests.some((r) => isOpenRequest(r.state));
  return (
    <section className="card" aria-labelledby="batch-progress">
      <h2 id="batch-progress">Progress</h2>
      <p role="status">
        <strong>
          {finished} of {progress.total} finished
        </strong>
        {open ? ' — following the agents live…' : '.'} {progress.done} bundle{progress.done === 1 ? '' : 's'} collected.
      </p>
      <progress
        className="batch-progress"
        max={Math.max(1, progress.total)}
        value={finished}
        aria-label={`Batch progress: ${finished} of ${progress.total} finished`}
      />
      <ul className="state-counts" aria-label="Requests by state">
        {STATES.map((s) => (
          <li key={s}>
            <span className={`badge ${progress[s] > 0 ? (TONES[s] ?? 'info') : 'neutral'}`}>{s}</span>{' '}
            <strong>{progress[s] ?? 0}</strong>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Batch({ batch }: { batch: BatchShape }) {
  return (
    <>
      <Progress batch={batch} />
      <section aria-labelledby="batch-servers">
        <h2 id="batch-servers">Servers and their bundles</h2>
        <DataTable
          caption="Servers of this batch"
          rows={batch.requests}
          rowKey={(r) => r.id}
          columns={[
            {
              header: 'Server',
              className: 'wrap',
              cell: (r) => (
                <>
                  {r.hostname}
                  <div className="mono hint">{r.server_id}</div>
                </>
              ),
            },
            {
              header: 'State',
              cell: (r) => <span className={`badge ${TONES[r.state] ?? 'info'}`}>{r.state}</span>,
            },
            { header: 'Finished', className: 'nowrap', cell: (r) => <RelativeTime at={r.finished_at} /> },
            {
              header: 'Bundle',
              cell: (r) => <Outcome r={{ ...r, requested_by_role: batch.created_by_role }} />,
            },
          ]}
        />
      </section>
      {batch.skipped.length > 0 && (
        <section aria-labelledby="batch-skipped">
          <h2 id="batch-skipped">Skipped servers</h2>
          <p className="hint">{skippedSummary(batch.skipped)}. No request was made to these.</p>
          <DataTable
            caption="Servers skipped by this batch"
            rows={batch.skipped}
            rowKey={(s) => s.server_id}
            columns={[
              {
                header: 'Server',
                className: 'wrap',
                cell: (s) => (
                  <>
                    {s.hostname ?? <span className="hint">unknown</span>}
                    <div className="mono hint">{s.server_id}</div>
                  </>
                ),
              },
              { header: 'Why', className: 'wrap', cell: (s) => s.detail },
            ]}
          />
        </section>
      )}
    </>
  );
}

function BundleBatchPage() {
  const { batchId = '' } = useParams();
  const batch = useBatch(batchId);
  const data = batch.data;
  return (
    <Page
      title="Bundle batch"
      back={{ label: 'Back to the server list', to: '/servers' }}
      description={
        data ? (
          <>
            {describeFilter(data.filter)}: {data.progress.total} requested <RelativeTime at={data.created_at} /> by{' '}
            {data.created_by_role === 'support' ? 'support' : 'an admin'} · <span className="mono">{data.id}</span>
          </>
        ) : (
          'Bundles requested from many servers at once.'
        )
      }
    >
      <QueryView query={batch} what="the batch" pending={<BlockSkeleton height="14rem" label="the batch" />}>
        {(b) => <Batch batch={b} />}
      </QueryView>
    </Page>
  );
}

export default gated('readServers', BundleBatchPage);
