import { DataTable } from '../../../components/data-table.tsx';
import { FilterForm } from '../../../components/filter-form.tsx';
import { Page } from '../../../components/page.tsx';
import { Pager } from '../../../components/pager.tsx';
import { EmptyState, QueryView, TableSkeleton } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { useKeysetPager } from '../../../lib/keyset-pager.ts';
import { useUrlFilters } from '../../../lib/search-params.ts';
import { gated, useUser } from '../../auth/index.ts';
import { type AuditFilters, auditExportUrl, useAuditLog } from '../api/bundles.ts';

function AuditLog() {
  const user = useUser();
  const acrossTenants = user.role === 'support';
  const [filters, setFilters] = useUrlFilters<AuditFilters>();
  const pager = useKeysetPager();
  const audit = useAuditLog(filters, pager.before);
  return (
    <Page
      title="Audit log"
      description={
        acrossTenants
          ? 'Who read which bundle, and who changed users, newest first.'
          : 'Who read your bundles, and who changed your users, endpoints and settings, newest first.'
      }
      actions={
        <>
          <a className="button" href={auditExportUrl('csv', filters)} download>
            Download CSV
          </a>
          <a className="button" href={auditExportUrl('jsonl', filters)} download>
            Download JSON Lines
          </a>
        </>
      }
    >
      <FilterForm
        key={JSON.stringify(filters)}
        label="Filter the audit log"
        onApply={({ text }) => {
          pager.reset();
          setFilters({ tenant_id: acrossTenants ? text('tenant_id') : undefined, action: text('action') });
        }}
      >
        {acrossTenants && (
          <div className="field">
            <label htmlFor="audit-tenant">Tenant ID</label>
            <input id="audit-tenant" name="tenant_id" defaultValue={filters.tenant_id} />
          </div>
        )}
        <div className="field">
          <label htmlFor="audit-action">Action</label>
          <input id="audit-action" name="action" defaultValue={filters.action} placeholder="bundle.show" />
        </div>
      </FilterForm>
      <QueryView
        query={audit}
        what="the audit log"
        pending={<TableSkeleton columns={5} rows={8} label="audit entries" />}
      >
        {(data) => (
          <DataTable
            caption="Audit entries, newest first"
            rows={data.entries}
            rowKey={(a) => a.id}
            empty={
              <EmptyState title="Nothing recorded">
                <p>Entries appear as bundles are read and users are changed.</p>
              </EmptyState>
            }
            footer={<Pager pager={pager} nextBefore={data.next_before} label="Audit log" />}
            columns={[
              { header: 'When', className: 'nowrap', cell: (a) => <RelativeTime at={a.at} /> },
              {
                header: 'Who',
                className: 'wrap',
                cell: (a) => (
                  <>
                    {a.actor_email ?? a.actor_id} <span className="hint">({a.actor_role})</span>
                  </>
                ),
              },
              { header: 'Action', className: 'mono', cell: (a) => a.action },
              { header: 'Target', className: 'mono wrap', cell: (a) => a.target },
              acrossTenants && { header: 'Tenant', className: 'mono', cell: (a) => a.tenant_id ?? '—' },
            ]}
          />
        )}
      </QueryView>
    </Page>
  );
}

export default gated('readAudit', AuditLog);
