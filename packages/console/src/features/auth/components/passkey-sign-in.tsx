import { browserSupportsWebAuthn } from '@simplewebauthn/browser';
import { WriteError } from '../../../components/query-states.tsx';
import { passkeyProblem, usePasskeySignIn } from '../api/passkeys.ts';

/** Signs in with a passkey of this site, no email or password asked (not offered where the browser has no WebAuthn). */
export function PasskeySignIn() {
  const signIn = usePasskeySignIn();
  if (!browserSupportsWebAuthn()) return null;
  return (
    <div className="passkey-sign-in">
      {signIn.error && <WriteError error={new Error(passkeyProblem(signIn.error))} />}
      <button type="button" className="button wide" disabled={signIn.isPending} onClick={() => signIn.mutate()}>
        Sign in with a passkey
      </button>
    </div>
  );
}
