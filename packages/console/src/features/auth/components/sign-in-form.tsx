import { type FormEvent, useState } from 'react';
import { WriteError } from '../../../components/query-states.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useSignIn } from '../api/session.ts';

function signInMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'invalid_credentials') return 'Wrong email or password. Check both and try again.';
    if (error.status === 429) return `${error.message} Wait a few minutes before trying again.`;
  }
  return error instanceof Error ? error.message : String(error);
}

export function SignInForm({ email: initialEmail = '', onSignedIn }: { email?: string; onSignedIn?: () => void }) {
  const signIn = useSignIn();
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    signIn.mutate({ email, password }, { onSuccess: onSignedIn });
  };
  return (
    <form className="form" onSubmit={onSubmit}>
      {signIn.error && <WriteError error={new Error(signInMessage(signIn.error))} />}
      <TextField
        label="Email"
        type="email"
        name="email"
        autoComplete="username"
        required
        value={email}
        onChange={(e) => setEmail(e.target.value)}
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
      <button type="submit" className="button primary" disabled={signIn.isPending}>
        Sign in
      </button>
    </form>
  );
}
