import { Link } from 'react-router';
import { DataTable } from '../../../components/data-table.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { type BatchFilter, finishedOf } from '../api/batches.ts';

export interface BatchRow {
  id: string;
  tenant_id: string;
  created_at: string;
  created_by_role: string;
  filter: BatchFilter | null;
  progress: Record<string, number>;
  skipped_count: number;
}

/** "environment prod, offline since 24h"; "selected servers" for a batch by ids. */
export function describeFilter(filter: BatchFilter | null): string {
  if (filter === null) return 'selected servers';
  const parts = [
    filter.environment !== undefined && `environment ${filter.environment}`,
    filter.agent_version !== undefined && `agent ${filter.agent_version}`,
    filter.offline_since !== undefined && `offline since ${filter.offline_since}`,
  ].filter(Boolean);
  return parts.length === 0 ? 'every online server' : parts.join(', ');
}

/** The newest batches with their progress, each opening its page. */
export function RecentBatches({ batches, showTenant }: { batches: BatchRow[]; showTenant: boolean }) {
  return (
    <section aria-labelledby="bundle-batches">
      <h2 id="bundle-batches">Bundle batches</h2>
      <DataTable
        caption="Bundle batches, newest first"
        rows={batches}
        rowKey={(b) => b.id}
        empty={<p className="hint">No batch yet: select servers above, or request by filter.</p>}
        columns={[
          {
            header: 'Batch',
            className: 'wrap',
            cell: (b) => (
              <>
                <Link to={`/bundle-batches/${encodeURIComponent(b.id)}`}>{describeFilter(b.filter)}</Link>
                <div className="mono hint">{b.id}</div>
              </>
            ),
          },
          showTenant && { header: 'Tenant', className: 'mono', cell: (b) => b.tenant_id },
          {
            header: 'Requested',
            className: 'nowrap',
            cell: (b) => (
              <>
                <RelativeTime at={b.created_at} />
                <div className="hint">by {b.created_by_role === 'support' ? 'support' : 'an admin'}</div>
              </>
            ),
          },
          {
            header: 'Progress',
            className: 'nowrap',
            cell: (b) => (
              <>
                {finishedOf(b.progress)} of {b.progress.total} finished
                <div className="hint">
                  {b.progress.done} done{b.progress.failed > 0 && `, ${b.progress.failed} failed`}
                  {b.skipped_count > 0 && `, ${b.skipped_count} skipped`}
                </div>
              </>
            ),
          },
        ]}
      />
    </section>
  );
}
