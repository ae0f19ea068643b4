// Settings > Users, for admins: the SCIM base URL and tokens an identity provider (Okta,
// Microsoft Entra ID…) provisions the tenant's users with. A new token is shown once.

import { type FormEvent, useId, useState } from 'react';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { CopyField, ShownOnce } from '../../../components/copy-field.tsx';
import { ACTIONS, DataTable } from '../../../components/data-table.tsx';
import { QueryView, TableSkeleton, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { useCreateScimToken, useRevokeScimToken, useScimTokens } from '../api/scim.ts';

export function ScimProvisioning() {
  const id = useId();
  const tokens = useScimTokens();
  const create = useCreateScimToken();
  const revoke = useRevokeScimToken();
  const [name, setName] = useState('');
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ name: name.trim() }, { onSuccess: () => setName('') });
  };
  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>SCIM provisioning</h2>
      <p>
        Let your identity provider (Okta, Microsoft Entra ID) create, update and deactivate this tenant’s users. A user
        it deactivates is signed out at once and their API tokens stop working. Give it the base URL and a token.
      </p>
      {tokens.data && <CopyField label="SCIM base URL" value={tokens.data.base_url} copyLabel="Copy base URL" />}
      <form className="filters" onSubmit={onSubmit}>
        <div className="wide-field">
          <TextField
            label="SCIM token name"
            required
            maxLength={100}
            placeholder="Okta"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <button type="submit" className="button primary" disabled={create.isPending}>
          Create SCIM token
        </button>
      </form>
      <WriteError error={create.error ?? revoke.error} />
      {create.data && (
        <ShownOnce label="SCIM token" value={create.data.token}>
          Paste the token “{create.data.name}” into your identity provider now; Guard keeps only its hash.
        </ShownOnce>
      )}
      <QueryView
        query={tokens}
        what="the SCIM tokens"
        pending={<TableSkeleton columns={4} rows={1} label="SCIM tokens" />}
      >
        {(data) => (
          <DataTable
            caption="SCIM tokens"
            rows={data.tokens}
            rowKey={(t) => t.id}
            empty={<p className="hint">No SCIM token yet: provisioning is off.</p>}
            columns={[
              { header: 'Name', className: 'wrap', cell: (t) => t.name },
              { header: 'Created', className: 'nowrap', cell: (t) => <RelativeTime at={t.created_at} /> },
              {
                header: 'Last used',
                className: 'nowrap',
                cell: (t) => <RelativeTime at={t.last_used_at} empty="never" />,
              },
              {
                ...ACTIONS,
                cell: (t) => (
                  <ConfirmAction
                    small
                    label="Revoke"
                    question={`Revoke “${t.name}”? The identity provider using it is refused at once.`}
                    pending={revoke.isPending}
                    onConfirm={() => revoke.mutate(t.id)}
                  />
                ),
              },
            ]}
          />
        )}
      </QueryView>
    </section>
  );
}
