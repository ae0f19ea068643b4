// Settings > Single sign-on (admin): the tenant's identity providers. The SAML connection here;
// the OpenID Connect one sits beside it on the same page.

import { Page } from '../../../components/page.tsx';
import { gated } from '../../auth/index.ts';
import { SamlConnection } from '../components/saml-connection.tsx';

function SingleSignOnPage() {
  return (
    <Page
      title="Single sign-on"
      description="Let your people sign in with your identity provider: new users of your email domains join as members."
    >
      <SamlConnection />
    </Page>
  );
}

export default gated('manageSso', SingleSignOnPage);
