// The tenant's sign-in policy (DESIGN §6), for its admins: require two-step sign-in of
// everyone who signs in with a password, and require single sign-on (passwords then work
// only for admins who hold an authenticator app: break-glass).

import { useId } from 'react';
import { BlockSkeleton, QueryView, WriteError } from '../../../components/query-states.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useSignInPolicy, useTenantSettings } from '../api/users.ts';

function Toggle({
  label,
  hint,
  checked,
  disabled,
  onChange,
}: {
  label: string;
  hint: string;
  checked: boolean;
  disabled: boolean;
  onChange: (on: boolean) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label className="checkbox">
        <input
          type="checkbox"
          checked={checked}
          disabled={disabled}
          aria-describedby={`${id}-hint`}
          onChange={(e) => onChange(e.target.checked)}
        />
        {label}
      </label>
      <p id={`${id}-hint`} className="hint">
        {hint}
      </p>
    </div>
  );
}

export function SignInPolicy() {
  const settings = useTenantSettings();
  const change = useSignInPolicy();
  const notConfigured = change.error instanceof ApiError && change.error.code === 'sso_not_configured';
  return (
    <section className="card" aria-labelledby="policy-heading">
      <h2 id="policy-heading">Sign-in policy</h2>
      {notConfigured ? (
        <div className="notice error" role="alert">
          <p>Connect an identity provider in Settings &gt; Single sign-on before requiring single sign-on.</p>
        </div>
      ) : (
        <WriteError error={change.error} />
      )}
      <QueryView query={settings} what="the sign-in policy" pending={<BlockSkeleton height="6rem" label="policy" />}>
        {(s) => (
          <div className="form">
            <Toggle
              label="Require two-step sign-in"
              hint="Everyone who signs in with a password must use an authenticator app or a passkey. People without one set it up before anything else."
              checked={
                change.isPending && change.variables.require_mfa !== undefined
                  ? change.variables.require_mfa
                  : s.require_mfa
              }
              disabled={change.isPending}
              onChange={(on) => change.mutate({ require_mfa: on })}
            />
            <Toggle
              label="Require single sign-on"
              hint="People sign in through your identity provider. A password still works for admins who have two-step sign-in on, in case the provider is down."
              checked={
                change.isPending && change.variables.sso_only !== undefined ? change.variables.sso_only : s.sso_only
              }
              disabled={change.isPending}
              onChange={(on) => change.mutate({ sso_only: on })}
            />
          </div>
        )}
      </QueryView>
    </section>
  );
}
