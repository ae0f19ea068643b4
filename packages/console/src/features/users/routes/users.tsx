import { useId } from 'react';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { ACTIONS, DataTable } from '../../../components/data-table.tsx';
import { Page } from '../../../components/page.tsx';
import { QueryView, TableSkeleton, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { gated, useUser } from '../../auth/index.ts';
import {
  type UserRole,
  useChangeRole,
  useNewPasswordLink,
  useRemoveUser,
  useResetMfa,
  useUsers,
} from '../api/users.ts';
import { AddUserForm, SetPasswordLink } from '../components/add-user-form.tsx';
import { ScimProvisioning } from '../components/scim-provisioning.tsx';
import { SignInPolicy } from '../components/sign-in-policy.tsx';

function RoleSelect({ id, email, role }: { id: string; email: string; role: UserRole }) {
  const selectId = useId();
  const change = useChangeRole();
  return (
    <>
      <label htmlFor={selectId} className="visually-hidden">
        Role of {email}
      </label>
      <select
        id={selectId}
        value={change.isPending ? change.variables.role : role}
        disabled={change.isPending}
        onChange={(e) => change.mutate({ id, role: e.target.value as UserRole })}
      >
        <option value="member">member</option>
        <option value="admin">admin</option>
      </select>
      <WriteError error={change.error} />
    </>
  );
}

function Users() {
  const me = useUser();
  const users = useUsers();
  const remove = useRemoveUser();
  const link = useNewPasswordLink();
  const reset = useResetMfa();
  const linked = users.data?.users.find((u) => u.id === link.variables);
  return (
    <Page title="Users" description="People of your organisation who can sign in to this console.">
      <AddUserForm />
      <WriteError error={remove.error ?? link.error ?? reset.error} />
      {link.data && linked && <SetPasswordLink email={linked.email} url={link.data.set_password_url} />}
      <QueryView query={users} what="the users" pending={<TableSkeleton columns={5} rows={4} label="users" />}>
        {(data) => (
          <DataTable
            caption="Users"
            rows={data.users}
            rowKey={(u) => u.id}
            columns={[
              {
                header: 'Email',
                className: 'wrap',
                cell: (u) => (
                  <>
                    {u.email}
                    {u.id === me.id && <span className="hint"> (you)</span>}
                    {u.deactivated_at && (
                      <>
                        {' '}
                        <span className="badge neutral" title="Deactivated by the identity provider (SCIM)">
                          deactivated
                        </span>
                      </>
                    )}
                  </>
                ),
              },
              {
                header: 'Role',
                className: 'nowrap',
                cell: (u) => <RoleSelect id={u.id} email={u.email} role={u.role as UserRole} />,
              },
              {
                header: 'Password',
                cell: (u) => (u.has_password ? 'set' : <span className="badge warn">not set yet</span>),
              },
              {
                header: 'Two-step',
                cell: (u) => (u.totp_enabled ? <span className="badge ok">on</span> : 'off'),
              },
              {
                header: 'Last sign-in',
                className: 'nowrap',
                cell: (u) => <RelativeTime at={u.last_login_at} empty="never" />,
              },
              { header: 'Added', className: 'nowrap', cell: (u) => <RelativeTime at={u.created_at} /> },
              {
                ...ACTIONS,
                cell: (u) =>
                  u.id !== me.id && (
                    <div className="actions">
                      <button
                        type="button"
                        className="button small"
                        disabled={link.isPending}
                        onClick={() => link.mutate(u.id)}
                        aria-label={`New link for ${u.email}`}
                      >
                        New link
                      </button>
                      {u.totp_enabled && (
                        <ConfirmAction
                          small
                          label="Reset two-step"
                          question={`Reset two-step sign-in of ${u.email}? Their authenticator app, recovery codes and passkeys are removed and they are signed out everywhere; they set it up again at their next sign-in.`}
                          pending={reset.isPending}
                          onConfirm={() => reset.mutate(u.id)}
                        />
                      )}
                      <ConfirmAction
                        small
                        label="Remove"
                        question={`Remove ${u.email}? Their sessions and API tokens stop working at once.`}
                        pending={remove.isPending}
                        onConfirm={() => remove.mutate(u.id)}
                      />
                    </div>
                  ),
              },
            ]}
          />
        )}
      </QueryView>
      <SignInPolicy />
      <ScimProvisioning />
    </Page>
  );
}

export default gated('manageUsers', Users);
