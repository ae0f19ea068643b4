import { type FormEvent, useId, useState } from 'react';
import { WriteError } from '../../../components/query-states.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { type MfaChallenge, useSignIn } from '../api/session.ts';
import { SecondStep } from './second-step.tsx';

interface TenantChoice {
  id: string;
  name: string;
}

function signInMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'invalid_credentials') return 'Wrong email or password. Check both and try again.';
    if (error.code === 'sso_required')
      return 'Your organisation signs in through single sign-on: use Sign in with SSO with your work email.';
    if (error.status === 429) return `${error.message} Wait a few minutes before trying again.`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The tenants to choose from when an email and password sign in to more than one. */
function tenantsOf(error: unknown): TenantChoice[] | undefined {
  if (!(error instanceof ApiError) || error.code !== 'tenant_required') return undefined;
  const tenants = error.body.tenants;
  return Array.isArray(tenants) ? (tenants as TenantChoice[]) : undefined;
}

export function SignInForm({
  email: initialEmail = '',
  onSignedIn,
  onSecondStep,
}: {
  email?: string;
  onSignedIn?: () => void;
  /** Told when the second step is asked (true) and left (false). */
  onSecondStep?: (asked: boolean) => void;
}) {
  const signIn = useSignIn();
  const id = useId();
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const [choices, setChoices] = useState<TenantChoice[]>();
  const [tenant, setTenant] = useState('');
  const [challenge, setChallenge] = useState<MfaChallenge>();
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    signIn.mutate(
      { email, password, ...(choices && tenant ? { tenant_id: tenant } : {}) },
      {
        onSuccess: (answer) => {
          if ('mfa_required' in answer) {
            setChallenge(answer);
            onSecondStep?.(true);
          } else onSignedIn?.();
        },
        onError: (error) => {
          const offered = tenantsOf(error);
          if (offered) {
            setChoices(offered);
            setTenant(offered[0]?.id ?? '');
          }
        },
      },
    );
  };
  const asked = tenantsOf(signIn.error);
  if (challenge)
    return (
      <SecondStep
        challenge={challenge}
        onStartOver={() => {
          setChallenge(undefined);
          onSecondStep?.(false);
          setPassword('');
          signIn.reset();
        }}
      />
    );
  return (
    <form className="form" onSubmit={onSubmit}>
      {signIn.error && !asked && <WriteError error={new Error(signInMessage(signIn.error))} />}
      {asked && <p className="muted">This email and password sign in to more than one tenant: choose one.</p>}
      <TextField
        label="Email"
        type="email"
        name="email"
        autoComplete="username"
        required
        value={email}
        onChange={(e) => {
          setEmail(e.target.value);
          setChoices(undefined);
        }}
      />
      <TextField
        label="Password"
        type="password"
        name="password"
        autoComplete="current-password"
        required
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      {choices && (
        <div className="field">
          <label htmlFor={`${id}-tenant`}>Tenant</label>
          <select id={`${id}-tenant`} value={tenant} onChange={(e) => setTenant(e.target.value)}>
            {choices.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </div>
      )}
      <button type="submit" className="button primary" disabled={signIn.isPending}>
        Sign in
      </button>
    </form>
  );
}
