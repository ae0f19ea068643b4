import { Link } from 'react-router';
import { Page } from '../../../components/page.tsx';
import { Pager } from '../../../components/pager.tsx';
import { EmptyState, ErrorNotice, TableSkeleton } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TableWrap } from '../../../components/table-wrap.tsx';
import { formatBytes } from '../../../lib/bytes.ts';
import { useKeysetPager } from '../../../lib/keyset-pager.ts';
import { useUrlFilters } from '../../../lib/search-params.ts';
import { Gate, useUser } from '../../auth/index.ts';
import { type BundleFilters as Filters, useBundles } from '../api/bundles.ts';
import { BundleFilters } from '../components/bundle-filters.tsx';

function BundlesList() {
  const user = useUser();
  const acrossTenants = user.role === 'support';
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
      {bundles.isPending ? (
        <TableSkeleton columns={6} rows={6} label="bundles" />
      ) : bundles.isError ? (
        <ErrorNotice error={bundles.error} what="the bundles" onRetry={() => bundles.refetch()} />
      ) : bundles.data.bundles.length === 0 ? (
        <EmptyState title={filtered ? 'No bundle matches these filters' : 'No bundles yet'}>
          <p>
            {filtered
              ? 'Clear a filter or widen the dates.'
              : 'On a server, run guard-agent support-bundle collect, then support-bundle upload with the file it printed.'}
          </p>
        </EmptyState>
      ) : (
        <>
          <TableWrap>
            <table>
              <caption className="visually-hidden">Support bundles, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Bundle</th>
                  <th scope="col">Server</th>
                  {acrossTenants && <th scope="col">Tenant</th>}
                  <th scope="col">Trigger</th>
                  <th scope="col">Agent version</th>
                  <th scope="col">Size</th>
                  <th scope="col">Uploaded</th>
                </tr>
              </thead>
              <tbody>
                {bundles.data.bundles.map((b) => (
                  <tr key={b.bundle_id}>
                    <td className="wrap">
                      <Link to={b.bundle_id}>{b.filename}</Link>
                      <div className="mono hint">{b.bundle_id}</div>
                    </td>
                    <td className="wrap">{b.hostname}</td>
                    {acrossTenants && <td className="mono">{b.tenant_id}</td>}
                    <td className="mono">{b.trigger}</td>
                    <td className="mono">{b.agent_version}</td>
                    <td className="nowrap">{formatBytes(b.size)}</td>
                    <td className="nowrap">
                      <RelativeTime at={b.uploaded_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager pager={pager} nextBefore={bundles.data.next_before} label="Bundles" />
        </>
      )}
    </Page>
  );
}

export function BundlesListPage() {
  return (
    <Gate permission="readBundles">
      <BundlesList />
    </Gate>
  );
}

export default BundlesListPage;
