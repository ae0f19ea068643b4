import { Link, useNavigate } from 'react-router';
import { Page } from '../../../components/page.tsx';
import { gated } from '../../auth/index.ts';
import { useCreateEndpoint } from '../api/endpoints.ts';
import { EndpointForm } from '../components/endpoint-form/endpoint-form.tsx';

const LIST = '/settings/integrations/webhooks';

function NewEndpoint() {
  const create = useCreateEndpoint();
  const navigate = useNavigate();
  return (
    <Page
      title="Add Endpoint"
      back={{ label: 'Back to the endpoints', to: LIST }}
      description={
        <>
          Guard will send every new signal to this URL, signed with a secret you get once it is created. Receiver on
          your own machine? See <Link to={`${LIST}/local-development`}>developing a receiver locally</Link>.
        </>
      }
    >
      <EndpointForm
        submitLabel="Create endpoint"
        pending={create.isPending}
        error={create.error}
        onCancel={() => navigate(LIST)}
        onSubmit={(input) =>
          create.mutate(input, { onSuccess: (endpoint) => navigate(`${LIST}/${endpoint.id}`, { replace: true }) })
        }
      />
    </Page>
  );
}

export default gated('manageWebhooks', NewEndpoint);
