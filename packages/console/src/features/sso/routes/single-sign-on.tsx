// Settings > Single sign-on (admin): the tenant's identity providers, each protocol in its own
// section — OpenID Connect (components/oidc-connection.tsx) and SAML
// (components/saml-connection.tsx). An email domain routes to one of them.

import { Page } from '../../../components/page.tsx';
import { Gate } from '../../auth/index.ts';
import { OidcConnection } from '../components/oidc-connection.tsx';
import { SamlConnection } from '../components/saml-connection.tsx';

export function SingleSignOnPage() {
  return (
    <Gate permission="manageSso">
      <Page
        title="Single sign-on"
        description="Let your people sign in to Guard through your organisation’s identity provider: OpenID Connect or SAML. New users of your email domains join as members."
      >
        <OidcConnection />
        <SamlConnection />
      </Page>
    </Gate>
  );
}

export default SingleSignOnPage;
