import { useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { AuthCard } from '../components/auth-card.tsx';
import { PasskeySignIn } from '../components/passkey-sign-in.tsx';
import { SignInForm } from '../components/sign-in-form.tsx';
import { SsoSignIn } from '../components/sso-sign-in.tsx';
import { ssoErrorMessage } from '../sso-errors.ts';

/**
 * Shown in place of any console page while signed out; the URL stays, so it opens after.
 * Two ways to name who is signing in, one at a time: the password form (with **Sign in with
 * SSO** below it), or single sign-on's work email (with the way back to the password). One at
 * a time, so that the contract's names stay unique on the page (Email / Work email). A passkey
 * signs in without either. While the password's second step is asked, only it is shown.
 */
export function SignInPage({ expired = false }: { expired?: boolean }) {
  // Single sign-on that did not sign the person in comes back here with ?sso_error=<code>:
  // said once, then taken out of the URL (a later sign-in page must not repeat it).
  const [params, setParams] = useSearchParams();
  const [ssoError] = useState(() => params.get('sso_error'));
  useEffect(() => {
    if (!params.has('sso_error')) return;
    const rest = new URLSearchParams(params);
    rest.delete('sso_error');
    setParams(rest, { replace: true });
  }, [params, setParams]);
  const [sso, setSso] = useState(ssoError !== null);
  const [secondStep, setSecondStep] = useState(false);
  const [switched, setSwitched] = useState(0);
  const way = useRef<HTMLDivElement>(null);
  // After a switch, the first field of the way chosen has the focus (the button pressed is gone).
  useEffect(() => {
    if (switched) way.current?.querySelector('input')?.focus();
  }, [switched]);
  const switchTo = (toSso: boolean) => {
    setSso(toSso);
    setSwitched((n) => n + 1);
  };
  return (
    <AuthCard title="Sign in to Guard">
      {ssoError && (
        <div className="notice error" role="alert">
          <p>{ssoErrorMessage(ssoError)}</p>
        </div>
      )}
      {expired && (
        <div className="notice info" role="status">
          <p>Your session ended. Sign in again to continue where you were.</p>
        </div>
      )}
      <div ref={way} key={String(sso)}>
        {sso ? <SsoSignIn /> : <SignInForm onSecondStep={setSecondStep} />}
      </div>
      {!secondStep && (
        <>
          <p className="auth-or" aria-hidden="true">
            or
          </p>
          <div className="auth-ways">
            {sso ? (
              <button type="button" className="button wide" onClick={() => switchTo(false)}>
                Use a password instead
              </button>
            ) : (
              <button type="button" className="button wide" onClick={() => switchTo(true)}>
                Sign in with SSO
              </button>
            )}
            <PasskeySignIn />
          </div>
        </>
      )}
    </AuthCard>
  );
}
