import { Link } from 'react-router';
import { DataTable } from '../../../components/data-table.tsx';
import { Page } from '../../../components/page.tsx';
import { Pager } from '../../../components/pager.tsx';
import { EmptyState, QueryView, TableSkeleton } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { formatBytes } from '../../../lib/bytes.ts';
import { useKeysetPager } from '../../../lib/keyset-pager.ts';
import { useUrlFilters } from '../../../lib/search-params.ts';
import { gated, useCan, useUser } from '../../auth/index.ts';
import { type BundleFilters as Filters, useBundles } from '../api/bundles.ts';
import { BundleFilters } from '../components/bundle-filters.tsx';

function BundlesList() {
  const user = useUser();
  const acrossTenants = user.role === 'support';
  const mayEditAnalyzers = useCan('manageAnalyzers');
  const [filters, setFilters] = useUrlFilters<Filters>();
  const pager = useKeysetPager();
  const bundles = useBundles(filters, pager.before);
  const filtered = Object.values(filters).some((v) => v !== undefined);
  return (
    <Page
      title="Support bundles"
      description={
        acrossTenants
          ? 'Redacted diagnostic bundles uploaded by agents of every tenant. Each view is recorded in the audit log.'
          : 'Redacted diagnostic bundles your servers uploaded. Each view is recorded in the audit log.'
      }
      actions={
        mayEditAnalyzers && (
          <Link className="button" to="/support/analyzers">
            Analyzers
          </Link>
        )
      }
    >
      <BundleFilters
        key={JSON.stringify(filters)}
        value={filters}
        acrossTenants={acrossTenants}
        onChange={(f) => {
          pager.reset();
          setFilters(f);
        }}
      />
      <QueryView query={bundles} what="the bundles" pending={<TableSkeleton columns={6} rows={6} label="bundles" />}>
        {(data) => (
          <DataTable
            caption="Support bundles, newest first"
            rows={data.bundles}
            rowKey={(b) => b.bundle_id}
            empty={
              <EmptyState title={filtered ? 'No bundle matches these filters' : 'No bundles yet'}>
                <p>
                  {filtered
                    ? 'Clear a filter or widen the dates.'
                    : 'On a server, run guard-agent support-bundle collect, then support-bundle upload with the file it printed.'}
                </p>
              </EmptyState>
            }
            footer={<Pager pager={pager} nextBefore={data.next_before} label="Bundles" />}
            columns={[
              {
                header: 'Bundle',
                className: 'wrap',
                cell: (b) => (
                  <>
                    <Link to={b.bundle_id}>{b.filename}</Link>
                    <div className="mono hint">{b.bundle_id}</div>
                    {b.deleted && (
                      <div className="hint">
                        <span className="badge danger">deleted</span> <RelativeTime at={b.deleted.at} />{' '}
                        {b.deleted.reason === 'retention' ? 'by retention' : `by ${b.deleted.by_email ?? 'an admin'}`}
                      </div>
                    )}
                  </>
                ),
              },
              { header: 'Server', className: 'wrap', cell: (b) => b.hostname },
              acrossTenants && { header: 'Tenant', className: 'mono', cell: (b) => b.tenant_id },
              { header: 'Trigger', className: 'mono', cell: (b) => b.trigger },
              { header: 'Agent version', className: 'mono', cell: (b) => b.agent_version },
              { header: 'Size', className: 'nowrap', cell: (b) => formatBytes(b.size) },
              { header: 'Uploaded', className: 'nowrap', cell: (b) => <RelativeTime at={b.uploaded_at} /> },
            ]}
          />
        )}
      </QueryView>
    </Page>
  );
}

export default gated('readBundles', BundlesList);
