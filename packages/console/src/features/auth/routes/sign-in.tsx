import { AuthCard } from '../components/auth-card.tsx';
import { SignInForm } from '../components/sign-in-form.tsx';
import { SsoSignIn } from '../components/sso-sign-in.tsx';
import { ssoErrorMessage } from '../sso-errors.ts';

/** Shown in place of any console page while signed out; the URL stays, so it opens after. */
export function SignInPage({ expired = false }: { expired?: boolean }) {
  // Single sign-on that did not sign the person in comes back here with ?sso_error=<code>.
  const ssoError = new URLSearchParams(window.location.search).get('sso_error');
  return (
    <AuthCard title="Sign in to Guard">
      {expired && (
        <div className="notice info" role="status">
          <p>Your session ended. Sign in again to continue where you were.</p>
        </div>
      )}
      {ssoError && (
        <div className="notice error" role="alert">
          <p>{ssoErrorMessage(ssoError)}</p>
        </div>
      )}
      <SignInForm />
      <p className="auth-or" aria-hidden="true">
        or
      </p>
      <SsoSignIn open={ssoError !== null} />
    </AuthCard>
  );
}
