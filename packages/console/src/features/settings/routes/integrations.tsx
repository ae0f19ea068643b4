import { Link } from 'react-router';
import { Page } from '../../../components/page.tsx';
import { Gate } from '../../auth/index.ts';

export function IntegrationsPage() {
  return (
    <Gate permission="readWebhooks">
      <Page title="Integrations" description="Send what Guard sees to the tools you already use.">
        <div className="card-grid">
          <section className="card" aria-labelledby="integration-webhooks">
            <h2 id="integration-webhooks">
              <Link to="/settings/integrations/webhooks">Webhooks</Link>
            </h2>
            <p>
              Signed HTTPS POSTs of every security signal to your endpoints, retried until they arrive, with a log of
              each attempt.
            </p>
          </section>
        </div>
      </Page>
    </Gate>
  );
}

export default IntegrationsPage;
