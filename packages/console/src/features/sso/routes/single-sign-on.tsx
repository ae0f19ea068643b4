// Settings > Single sign-on (admin): the tenant's identity providers. OpenID Connect here
// (components/oidc-connection.tsx); each protocol keeps its own section.

import { Page } from '../../../components/page.tsx';
import { Gate } from '../../auth/index.ts';
import { OidcConnection } from '../components/oidc-connection.tsx';

export function SingleSignOnPage() {
  return (
    <Gate permission="manageSso">
      <Page
        title="Single sign-on"
        description="Let your people sign in to Guard through your organisation’s identity provider."
      >
        <OidcConnection />
      </Page>
    </Gate>
  );
}

export default SingleSignOnPage;
