import { useNavigate } from 'react-router';
import { Page } from '../../../components/page.tsx';
import { EmptyState, QueryView, TableSkeleton } from '../../../components/query-states.tsx';
import { gated, useCan } from '../../auth/index.ts';
import { useEndpoints } from '../api/endpoints.ts';
import { EndpointTable } from '../components/endpoint-table.tsx';
import { WebhooksNav } from '../components/webhooks-nav.tsx';

function WebhooksList() {
  const endpoints = useEndpoints();
  const canWrite = useCan('manageWebhooks');
  const navigate = useNavigate();
  const add = canWrite && (
    <button type="button" className="button primary" onClick={() => navigate('new')}>
      Add Endpoint
    </button>
  );
  return (
    <Page
      title="Webhooks"
      description="Guard POSTs each security signal, signed, to every enabled endpoint."
      actions={add}
    >
      <WebhooksNav />
      {!canWrite && (
        <div className="notice info">
          <p>You can look at endpoints and their deliveries. Only admins can add or change them.</p>
        </div>
      )}
      <QueryView
        query={endpoints}
        what="the endpoints"
        pending={<TableSkeleton columns={5} rows={3} label="endpoints" />}
      >
        {(data) =>
          data.endpoints.length === 0 ? (
            <EmptyState title="No endpoints yet">
              <p>
                {canWrite
                  ? 'Add an endpoint with the https:// URL of your receiver; Guard then sends it every new signal.'
                  : 'An admin of your organisation can add one.'}
              </p>
            </EmptyState>
          ) : (
            <EndpointTable endpoints={data.endpoints} />
          )
        }
      </QueryView>
    </Page>
  );
}

export default gated('readWebhooks', WebhooksList);
