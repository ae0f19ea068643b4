import { AuthCard } from '../components/auth-card.tsx';
import { PasskeySignIn } from '../components/passkey-sign-in.tsx';
import { SignInForm } from '../components/sign-in-form.tsx';
import { ssoErrorMessage } from '../sso-errors.ts';

/** Shown in place of any console page while signed out; the URL stays, so it opens after. */
export function SignInPage({ expired = false }: { expired?: boolean }) {
  const ssoError = ssoErrorMessage(window.location.search);
  return (
    <AuthCard title="Sign in to Guard">
      {ssoError && (
        <div className="notice error" role="alert">
          <p>{ssoError}</p>
        </div>
      )}
      {expired && (
        <div className="notice info" role="status">
          <p>Your session ended. Sign in again to continue where you were.</p>
        </div>
      )}
      <SignInForm />
      <PasskeySignIn />
    </AuthCard>
  );
}
