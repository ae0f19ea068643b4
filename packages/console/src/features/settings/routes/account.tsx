import { Page } from '../../../components/page.tsx';
import { useUser } from '../../auth/index.ts';
import { ApiTokens } from '../components/api-tokens.tsx';
import { ChangePassword } from '../components/change-password.tsx';
import { Passkeys } from '../components/passkeys.tsx';
import { Sessions } from '../components/sessions.tsx';
import { TwoStepSignIn } from '../components/two-step.tsx';

export function AccountPage() {
  const user = useUser();
  return (
    <Page title="Account" description={`Signed in as ${user.email} (${user.role}).`}>
      <ChangePassword />
      <TwoStepSignIn />
      <Passkeys />
      <ApiTokens />
      <Sessions />
    </Page>
  );
}

export default AccountPage;
