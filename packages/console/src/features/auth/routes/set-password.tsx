// The target of a one-time set-password link: /console/set-password#<token>.

import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { BlockSkeleton, WriteError } from '../../../components/query-states.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { usePasswordLink, useSetPassword } from '../api/set-password.ts';
import { AuthCard } from '../components/auth-card.tsx';
import { SignInForm } from '../components/sign-in-form.tsx';
import { PASSWORD_MIN, passwordProblem } from '../password-rules.ts';

function linkProblem(error: unknown): string {
  if (error instanceof ApiError && error.status === 410)
    return 'This link was already used or has expired. Ask an admin of your organisation for a new one.';
  if (error instanceof ApiError && error.status === 404)
    return 'This link is not valid. Copy the whole link you were sent, or ask an admin for a new one.';
  return error instanceof Error ? error.message : String(error);
}

export function SetPasswordPage() {
  const token = decodeURIComponent(window.location.hash.replace(/^#/, ''));
  const link = usePasswordLink(token);
  const setPassword = useSetPassword();
  const [password, setPasswordValue] = useState('');
  const [problem, setProblem] = useState<string>();
  const navigate = useNavigate();

  if (setPassword.isSuccess)
    return (
      <AuthCard title="Sign in to Guard">
        <div className="notice ok" role="status">
          <p>Your password is set. Sign in with it now.</p>
        </div>
        <SignInForm email={link.data?.email} onSignedIn={() => navigate('/', { replace: true })} />
      </AuthCard>
    );

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const p = passwordProblem(password);
    setProblem(p);
    if (!p) setPassword.mutate({ token, password });
  };

  return (
    <AuthCard title="Set your password">
      {token === '' ? (
        <div className="notice error" role="alert">
          <p>This page needs the link you were sent. Open the whole link, or ask an admin for a new one.</p>
        </div>
      ) : link.isPending ? (
        <BlockSkeleton height="9rem" label="the link" />
      ) : link.isError ? (
        <div className="notice error" role="alert">
          <p>{linkProblem(link.error)}</p>
        </div>
      ) : (
        <form className="form" onSubmit={onSubmit} noValidate>
          <p>
            For <strong>{link.data.email}</strong>. This link works once.
          </p>
          <WriteError error={setPassword.error && new Error(linkProblem(setPassword.error))} />
          <TextField
            label="New password"
            type="password"
            autoComplete="new-password"
            required
            minLength={PASSWORD_MIN}
            hint={`At least ${PASSWORD_MIN} characters. A passphrase of a few words is easy to type and hard to guess.`}
            error={problem}
            value={password}
            onChange={(e) => setPasswordValue(e.target.value)}
          />
          <button type="submit" className="button primary" disabled={setPassword.isPending}>
            Set password
          </button>
        </form>
      )}
    </AuthCard>
  );
}
