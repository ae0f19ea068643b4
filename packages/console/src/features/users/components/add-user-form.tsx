import { type FormEvent, useId, useState } from 'react';
import { CopyField } from '../../../components/copy-field.tsx';
import { WriteError } from '../../../components/query-states.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { type UserRole, useAddUser } from '../api/users.ts';

export function SetPasswordLink({ email, url }: { email: string; url: string }) {
  return (
    <div className="notice ok" role="status">
      <p>
        <strong>Send this link to {email}.</strong> It is shown only once, works once, and expires in 24 hours. Whoever
        opens it sets the password of this account, so send it privately.
      </p>
      <CopyField label="Set-password link" value={url} copyLabel="Copy link" />
    </div>
  );
}

export function AddUserForm() {
  const id = useId();
  const add = useAddUser();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<UserRole>('member');
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate({ email: email.trim(), role }, { onSuccess: () => setEmail('') });
  };
  const taken = add.error instanceof ApiError && add.error.code === 'email_taken';
  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Add a user</h2>
      <form className="filters" onSubmit={onSubmit}>
        <div className="wide-field">
          <TextField
            label="Email"
            type="email"
            required
            autoComplete="off"
            value={email}
            error={taken ? 'A user with this email exists already.' : undefined}
            onChange={(e) => setEmail(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-role`}>Role</label>
          <select id={`${id}-role`} value={role} onChange={(e) => setRole(e.target.value as UserRole)}>
            <option value="member">member: reads everything, changes nothing</option>
            <option value="admin">admin: also manages endpoints, servers and users</option>
          </select>
        </div>
        <button type="submit" className="button primary" disabled={add.isPending}>
          Add user
        </button>
      </form>
      {!taken && <WriteError error={add.error} />}
      {add.data && <SetPasswordLink email={add.data.email} url={add.data.set_password_url} />}
    </section>
  );
}
