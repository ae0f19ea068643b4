import { type FormEvent, useState } from 'react';
import { WriteError } from '../../../components/query-states.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { PASSWORD_MIN, passwordProblem } from '../../auth/index.ts';
import { useChangePassword } from '../api/account.ts';

export function ChangePassword() {
  const change = useChangePassword();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [problem, setProblem] = useState<string>();
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const p = passwordProblem(next);
    setProblem(p);
    if (!p)
      change.mutate(
        { current_password: current, new_password: next },
        {
          onSuccess: () => {
            setCurrent('');
            setNext('');
          },
        },
      );
  };
  const wrongCurrent = change.error instanceof ApiError && change.error.code === 'wrong_password';
  return (
    <section className="card" aria-labelledby="password-heading">
      <h2 id="password-heading">Password</h2>
      <form className="form" onSubmit={onSubmit} noValidate>
        {change.isSuccess && (
          <p className="notice ok" role="status">
            Password changed. Your other sessions were signed out.
          </p>
        )}
        {!wrongCurrent && <WriteError error={change.error} />}
        <TextField
          label="Current password"
          type="password"
          autoComplete="current-password"
          required
          value={current}
          error={wrongCurrent ? 'This is not your current password.' : undefined}
          onChange={(e) => setCurrent(e.target.value)}
        />
        <TextField
          label="New password"
          type="password"
          autoComplete="new-password"
          required
          minLength={PASSWORD_MIN}
          hint={`At least ${PASSWORD_MIN} characters.`}
          error={problem}
          value={next}
          onChange={(e) => setNext(e.target.value)}
        />
        <div>
          <button type="submit" className="button primary" disabled={change.isPending}>
            Change password
          </button>
        </div>
      </form>
    </section>
  );
}
