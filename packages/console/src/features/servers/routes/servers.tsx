import { useState } from 'react';
import { Page } from '../../../components/page.tsx';
import { EmptyState, QueryView, TableSkeleton } from '../../../components/query-states.tsx';
import { gated, useCan, useUser } from '../../auth/index.ts';
import { useBatches } from '../api/batches.ts';
import { useBundleRequests, useRequestBundle, useServers } from '../api/servers.ts';
import { BundleRequests } from '../components/bundle-requests.tsx';
import { EnrollmentTokens } from '../components/enrollment-tokens.tsx';
import { RequestByFilter, SelectionBar } from '../components/fleet-actions.tsx';
import { RecentBatches } from '../components/recent-batches.tsx';
import { type ServerRow, ServerTable } from '../components/server-table.tsx';
import { SupportAccess } from '../components/support-access.tsx';

function Servers() {
  const { role } = useUser();
  const servers = useServers();
  const requests = useBundleRequests();
  const request = useRequestBundle();
  const batches = useBatches();
  const shown = servers.data?.servers ?? [];
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const select = (s: ServerRow, on: boolean) =>
    setSelected((prev) => {
      const next = new Set(prev);
      if (on) next.add(s.id);
      else next.delete(s.id);
      return next;
    });
  const [failed, setFailed] = useState<{ host: string; message: string } | undefined>();
  const canEnroll = useCan('manageEnrollment');
  const canRequest = useCan('requestBundles');
  const canManageAccess = useCan('manageSupportAccess');
  const ask = (s: ServerRow) => {
    setFailed(undefined);
    request.mutate(s.id, { onError: (error) => setFailed({ host: s.hostname, message: error.message }) });
  };
  return (
    <Page
      title="Servers"
      description={
        role === 'support'
          ? "Every tenant's enrolled hosts. Ask one for a support bundle where its tenant allows it."
          : 'Hosts whose agent is enrolled with your organisation.'
      }
    >
      {canRequest && (
        <SelectionBar
          servers={shown}
          selected={selected}
          onSelectAll={(on) => setSelected(new Set(on ? shown.filter((s) => !s.revoked_at).map((s) => s.id) : []))}
        />
      )}
      <QueryView query={servers} what="the servers" pending={<TableSkeleton columns={7} rows={4} label="servers" />}>
        {(data) =>
          data.servers.length === 0 ? (
            <EmptyState title="No server enrolled yet">
              <p>
                {canEnroll
                  ? 'Create an enrolment token below and run the command it shows on the server.'
                  : 'An admin of your organisation can enrol servers.'}
              </p>
            </EmptyState>
          ) : (
            <ServerTable
              servers={data.servers}
              showTenant={role === 'support'}
              canRequest={canRequest}
              requesting={request.isPending ? request.variables : undefined}
              onRequest={ask}
              selected={canRequest ? selected : undefined}
              onSelect={select}
            />
          )
        }
      </QueryView>
      {failed && (
        <div className="notice error" role="alert">
          <p>
            <strong>Could not request a bundle from {failed.host}.</strong> {failed.message}
          </p>
        </div>
      )}
      {/* The sections below wait for the servers: the table arriving would push them down (layout shift). */}
      {!servers.isPending && (
        <>
          {requests.data && <BundleRequests requests={requests.data.requests} />}
          {canManageAccess && <SupportAccess />}
          {canEnroll && <EnrollmentTokens />}
          {canRequest && (
            <RequestByFilter tenants={role === 'support' ? [...new Set(shown.map((s) => s.tenant_id))] : undefined} />
          )}
          {batches.data && <RecentBatches batches={batches.data.batches} showTenant={role === 'support'} />}
        </>
      )}
    </Page>
  );
}

export default gated('readServers', Servers);
