import { useNavigate, useParams } from 'react-router';
import { Page } from '../../../components/page.tsx';
import { BlockSkeleton, QueryStatus } from '../../../components/query-states.tsx';
import { gated } from '../../auth/index.ts';
import { type Endpoint, type EventType, useEndpoint, useUpdateEndpoint } from '../api/endpoints.ts';
import { EndpointForm, type TransportInitial } from '../components/endpoint-form/endpoint-form.tsx';

function EditEndpoint() {
  const { endpointId = '' } = useParams();
  const endpoint = useEndpoint(endpointId);
  const update = useUpdateEndpoint(endpointId);
  const navigate = useNavigate();
  const detail = `/settings/integrations/webhooks/${endpointId}`;
  const back = { label: 'Back to the endpoint', to: detail };
  if (!endpoint.isSuccess)
    return (
      <Page title="Edit endpoint" back={back}>
        <QueryStatus
          query={endpoint}
          what="this endpoint"
          pending={<BlockSkeleton height="20rem" label="the endpoint" />}
        />
      </Page>
    );
  const e = endpoint.data;
  return (
    <Page
      title={`Edit ${e.name}`}
      back={back}
      description="Changes apply to the next attempt of every delivery. The signing secret stays the same."
    >
      <EndpointForm
        initial={{
          name: e.name,
          url: e.url,
          headers: e.headers,
          event_types: e.event_types as EventType[],
          min_severity: e.min_severity,
          signal_types: e.signal_types,
          rate_limit: e.rate_limit,
        }}
        transport={transportOf(e)}
        submitLabel="Save changes"
        pending={update.isPending}
        error={update.error}
        onCancel={() => navigate(detail)}
        onSubmit={(input) => update.mutate(input, { onSuccess: () => navigate(detail) })}
      />
    </Page>
  );
}

/** The form's view of the endpoint's authentication and TLS: what is set, never a secret. */
function transportOf(e: Endpoint): TransportInitial {
  const auth = e.auth;
  return {
    current: {
      auth: auth?.type ?? 'none',
      clientCertificate: e.tls.client_certificate,
      caCertificates: e.tls.ca_certificates,
    },
    fields:
      auth?.type === 'basic'
        ? { auth: 'basic', username: auth.username }
        : auth?.type === 'oauth2_client_credentials'
          ? {
              auth: auth.type,
              tokenUrl: auth.token_url,
              clientId: auth.client_id,
              scope: auth.scope ?? '',
              audience: auth.audience ?? '',
            }
          : {},
  };
}

export default gated('manageWebhooks', EditEndpoint);
