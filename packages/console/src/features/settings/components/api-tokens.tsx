import { type FormEvent, useState } from 'react';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { CopyField } from '../../../components/copy-field.tsx';
import { ACTIONS, DataTable } from '../../../components/data-table.tsx';
import { QueryView, TableSkeleton, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { useApiTokens, useCreateApiToken, useRevokeApiToken } from '../api/account.ts';

export function ApiTokens() {
  const tokens = useApiTokens();
  const create = useCreateApiToken();
  const revoke = useRevokeApiToken();
  const [name, setName] = useState('');
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ name: name.trim() }, { onSuccess: () => setName('') });
  };
  return (
    <section className="card" aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Personal API tokens</h2>
      <p>
        For scripts that call the API as you: send <code>Authorization: Bearer &lt;token&gt;</code>. A token has your
        role.
      </p>
      <form className="filters" onSubmit={onSubmit}>
        <div className="wide-field">
          <TextField
            label="Token name"
            required
            maxLength={100}
            placeholder="deploy script"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <button type="submit" className="button primary" disabled={create.isPending}>
          Create token
        </button>
      </form>
      <WriteError error={create.error ?? revoke.error} />
      {create.data && (
        <div className="notice warn" role="status">
          <p>
            <strong>Shown only once.</strong> Store the token “{create.data.name}” now; Guard keeps only its hash.
          </p>
          <CopyField label="API token" value={create.data.token} copyLabel="Copy token" />
        </div>
      )}
      <QueryView
        query={tokens}
        what="your API tokens"
        pending={<TableSkeleton columns={3} rows={2} label="API tokens" />}
      >
        {(data) => (
          <DataTable
            caption="Your API tokens"
            rows={data.tokens}
            rowKey={(t) => t.id}
            empty={<p className="hint">You have no API tokens.</p>}
            columns={[
              { header: 'Name', className: 'wrap', cell: (t) => t.name },
              { header: 'Created', className: 'nowrap', cell: (t) => <RelativeTime at={t.created_at} /> },
              {
                ...ACTIONS,
                cell: (t) => (
                  <ConfirmAction
                    small
                    label="Revoke"
                    question={`Revoke “${t.name}”? Scripts using it stop working at once.`}
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
