import { type FormEvent, useEffect, useRef, useState } from 'react';
import { TextField } from '../../../components/text-field.tsx';
import { ssoStartUrl } from '../sso-errors.ts';

/**
 * "Sign in with SSO": asks for the work email, then leaves for the identity provider of its
 * domain (a full navigation: the provider's pages are not the console's).
 */
export function SsoSignIn({ open: initiallyOpen = false }: { open?: boolean }) {
  const [open, setOpen] = useState(initiallyOpen);
  const [email, setEmail] = useState('');
  const [leaving, setLeaving] = useState(false);
  const field = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (open && !initiallyOpen) field.current?.querySelector('input')?.focus();
  }, [open, initiallyOpen]);
  if (!open)
    return (
      <button type="button" className="button sso" onClick={() => setOpen(true)}>
        Sign in with SSO
      </button>
    );
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setLeaving(true);
    window.location.assign(ssoStartUrl(email));
  };
  return (
    <form className="form" onSubmit={onSubmit} aria-label="Sign in with SSO">
      <div ref={field}>
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
      </div>
      <button type="submit" className="button primary" disabled={leaving}>
        Continue
      </button>
    </form>
  );
}
