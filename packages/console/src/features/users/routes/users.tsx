import { useId } from 'react';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { Page } from '../../../components/page.tsx';
import { ErrorNotice, TableSkeleton, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TableWrap } from '../../../components/table-wrap.tsx';
import { Gate, useUser } from '../../auth/index.ts';
import { type UserRole, useChangeRole, useNewPasswordLink, useRemoveUser, useUsers } from '../api/users.ts';
import { AddUserForm, SetPasswordLink } from '../components/add-user-form.tsx';

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
  const linked = users.data?.users.find((u) => u.id === link.variables);
  return (
    <Page title="Users" description="People of your organisation who can sign in to this console.">
      <AddUserForm />
      <WriteError error={remove.error ?? link.error} />
      {link.data && linked && <SetPasswordLink email={linked.email} url={link.data.set_password_url} />}
      {users.isPending ? (
        <TableSkeleton columns={5} rows={4} label="users" />
      ) : users.isError ? (
        <ErrorNotice error={users.error} what="the users" onRetry={() => users.refetch()} />
      ) : (
        <TableWrap>
          <table>
            <caption className="visually-hidden">Users</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Password</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Added</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data.users.map((u) => (
                <tr key={u.id}>
                  <td className="wrap">
                    {u.email}
                    {u.id === me.id && <span className="hint"> (you)</span>}
                  </td>
                  <td className="nowrap">
                    <RoleSelect id={u.id} email={u.email} role={u.role as UserRole} />
                  </td>
                  <td>{u.has_password ? 'set' : <span className="badge warn">not set yet</span>}</td>
                  <td className="nowrap">
                    <RelativeTime at={u.last_login_at} empty="never" />
                  </td>
                  <td className="nowrap">
                    <RelativeTime at={u.created_at} />
                  </td>
                  <td>
                    {u.id !== me.id && (
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
                        <ConfirmAction
                          small
                          label="Remove"
                          question={`Remove ${u.email}? Their sessions and API tokens stop working at once.`}
                          pending={remove.isPending}
                          onConfirm={() => remove.mutate(u.id)}
                        />
                      </div>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </Page>
  );
}

export function UsersPage() {
  return (
    <Gate permission="manageUsers">
      <Users />
    </Gate>
  );
}

export default UsersPage;
