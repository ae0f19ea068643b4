import { Page } from '../../../components/page.tsx';
import { EmptyState, ErrorNotice, TableSkeleton } from '../../../components/query-states.tsx';
import { Gate, useCan } from '../../auth/index.ts';
import { useServers } from '../api/servers.ts';
import { EnrollmentTokens } from '../components/enrollment-tokens.tsx';
import { ServerTable } from '../components/server-table.tsx';

function Servers() {
  const servers = useServers();
  const canEnroll = useCan('manageEnrollment');
  return (
    <Page title="Servers" description="Hosts whose agent is enrolled with your organisation.">
      {servers.isPending ? (
        <TableSkeleton columns={6} rows={4} label="servers" />
      ) : servers.isError ? (
        <ErrorNotice error={servers.error} what="the servers" onRetry={() => servers.refetch()} />
      ) : servers.data.servers.length === 0 ? (
        <EmptyState title="No server enrolled yet">
          <p>
            {canEnroll
              ? 'Create an enrolment token below and run the command it shows on the server.'
              : 'An admin of your organisation can enrol servers.'}
          </p>
        </EmptyState>
      ) : (
        <ServerTable servers={servers.data.servers} />
      )}
      {canEnroll && <EnrollmentTokens />}
    </Page>
  );
}

export function ServersPage() {
  return (
    <Gate permission="readServers">
      <Servers />
    </Gate>
  );
}

export default ServersPage;
