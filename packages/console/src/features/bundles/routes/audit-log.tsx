import type { FormEvent } from 'react';
import { Page } from '../../../components/page.tsx';
import { Pager } from '../../../components/pager.tsx';
import { EmptyState, ErrorNotice, TableSkeleton } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TableWrap } from '../../../components/table-wrap.tsx';
import { useKeysetPager } from '../../../lib/keyset-pager.ts';
import { useUrlFilters } from '../../../lib/search-params.ts';
import { Gate, useUser } from '../../auth/index.ts';
import { type AuditFilters, useAuditLog } from '../api/bundles.ts';

function AuditLog() {
  const user = useUser();
  const acrossTenants = user.role === 'support';
  const [filters, setFilters] = useUrlFilters<AuditFilters>();
  const pager = useKeysetPager();
  const audit = useAuditLog(filters, pager.before);
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim() || undefined;
    pager.reset();
    setFilters({ tenant_id: acrossTenants ? text('tenant_id') : undefined, action: text('action') });
  };
  return (
    <Page title="Audit log" description="Who read which bundle, and who changed users, newest first.">
      <form className="filters" onSubmit={onSubmit} aria-label="Filter the audit log" key={JSON.stringify(filters)}>
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
        <button type="submit" className="button">
          Apply filters
        </button>
      </form>
      {audit.isPending ? (
        <TableSkeleton columns={5} rows={8} label="audit entries" />
      ) : audit.isError ? (
        <ErrorNotice error={audit.error} what="the audit log" onRetry={() => audit.refetch()} />
      ) : audit.data.entries.length === 0 ? (
        <EmptyState title="Nothing recorded">
          <p>Entries appear as bundles are read and users are changed.</p>
        </EmptyState>
      ) : (
        <>
          <TableWrap>
            <table>
              <caption className="visually-hidden">Audit entries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  {acrossTenants && <th scope="col">Tenant</th>}
                </tr>
              </thead>
              <tbody>
                {audit.data.entries.map((a) => (
                  <tr key={a.id}>
                    <td className="nowrap">
                      <RelativeTime at={a.at} />
                    </td>
                    <td className="wrap">
                      {a.actor_email ?? a.actor_id} <span className="hint">({a.actor_role})</span>
                    </td>
                    <td className="mono">{a.action}</td>
                    <td className="mono wrap">{a.target}</td>
                    {acrossTenants && <td className="mono">{a.tenant_id ?? '—'}</td>}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager pager={pager} nextBefore={audit.data.next_before} label="Audit log" />
        </>
      )}
    </Page>
  );
}

export function AuditLogPage() {
  return (
    <Gate permission="readAudit">
      <AuditLog />
    </Gate>
  );
}

export default AuditLogPage;
