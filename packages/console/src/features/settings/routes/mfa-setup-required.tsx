// What a session sees while its tenant requires a second factor it does not have yet
// (require_mfa): only the setup, and a way out. The server refuses everything else with 403
// mfa_setup_required; once a factor is on, the session is asked again and the console opens.

import { AuthCard, useRefreshSession, useSignOut } from '../../auth/index.ts';
import { TwoStepSignIn } from '../components/two-step.tsx';

export function MfaSetupRequiredPage() {
  const refresh = useRefreshSession();
  const signOut = useSignOut();
  return (
    <AuthCard title="Set up two-step sign-in">
      <p>Your organisation requires a second step when you sign in. Set up an authenticator app to continue.</p>
      <TwoStepSignIn onChanged={() => void refresh()} />
      <button type="button" className="button" disabled={signOut.isPending} onClick={() => signOut.mutate()}>
        Sign out
      </button>
    </AuthCard>
  );
}

export default MfaSetupRequiredPage;
