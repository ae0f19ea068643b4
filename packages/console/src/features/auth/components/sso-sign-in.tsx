import { type FormEvent, useState } from 'react';
import { TextField } from '../../../components/text-field.tsx';
import { ssoStartUrl } from '../sso-errors.ts';

/**
 * Single sign-on's step of the sign-in page: the work email, then a full navigation to the
 * identity provider of its domain (the provider's pages are not the console's).
 */
export function SsoSignIn() {
  const [email, setEmail] = useState('');
  const [leaving, setLeaving] = useState(false);
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setLeaving(true);
    window.location.assign(ssoStartUrl(email));
  };
  return (
    <form className="form" onSubmit={onSubmit} aria-label="Single sign-on">
      <TextField
        label="Work email"
        type="email"
        name="sso-email"
        autoComplete="username"
        required
        hint="You continue at your organisation’s identity provider."
        value={email}
        onChange={(e) => setEmail(e.target.value)}
      />
      <button type="submit" className="button primary" disabled={leaving}>
        Continue
      </button>
    </form>
  );
}
