import { browserSupportsWebAuthn } from '@simplewebauthn/browser';
import { type FormEvent, useEffect, useId, useState } from 'react';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { ACTIONS, DataTable } from '../../../components/data-table.tsx';
import { QueryView, TableSkeleton, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { passkeyProblem } from '../../auth/index.ts';
import { useAddPasskey, usePasskeys, useRemovePasskey, useRenamePasskey } from '../api/passkeys.ts';

/** A passkey's name, edited in its row: Save or Cancel. */
function RenameForm({ id, name, onDone }: { id: string; name: string; onDone: () => void }) {
  const rename = useRenamePasskey();
  const [value, setValue] = useState(name);
  const formId = useId();
  // Keyboard focus moves to the field the Rename button opened.
  useEffect(() => {
    document.getElementById(formId)?.querySelector('input')?.focus();
  }, [formId]);
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    rename.mutate({ id, name: value.trim() }, { onSuccess: onDone });
  };
  return (
    <form className="inline-form" id={formId} onSubmit={onSubmit}>
      <WriteError error={rename.error} />
      <TextField label="New name" required maxLength={100} value={value} onChange={(e) => setValue(e.target.value)} />
      <div className="actions">
        <button type="submit" className="button primary small" disabled={rename.isPending}>
          Save
        </button>
        <button type="button" className="button small" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function Passkeys() {
  const passkeys = usePasskeys();
  const add = useAddPasskey();
  const remove = useRemovePasskey();
  const [name, setName] = useState('');
  const [renaming, setRenaming] = useState<string>();
  const supported = browserSupportsWebAuthn();
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate(name.trim(), { onSuccess: () => setName('') });
  };
  return (
    <section className="card" aria-labelledby="passkeys-heading">
      <h2 id="passkeys-heading">Passkeys</h2>
      <p>
        Sign in with your device’s screen lock or a security key instead of a password, or use one as the second step
        after your password.
      </p>
      <form className="filters" onSubmit={onSubmit}>
        <div className="wide-field">
          <TextField
            label="Passkey name"
            required
            maxLength={100}
            placeholder="work laptop"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <button type="submit" className="button primary" disabled={add.isPending || !supported}>
          Add passkey
        </button>
      </form>
      {!supported && <p className="hint">This browser cannot make passkeys (WebAuthn is not available here).</p>}
      {add.error && <WriteError error={new Error(passkeyProblem(add.error))} />}
      <WriteError error={remove.error} />
      {add.data && (
        <div className="notice info" role="status">
          <p>Passkey “{add.data.name}” added. You can sign in with it from now on.</p>
        </div>
      )}
      <QueryView
        query={passkeys}
        what="your passkeys"
        pending={<TableSkeleton columns={4} rows={1} label="passkeys" />}
      >
        {(data) => (
          <DataTable
            caption="Your passkeys"
            rows={data.passkeys}
            rowKey={(p) => p.id}
            empty={<p className="hint">You have no passkeys.</p>}
            columns={[
              {
                header: 'Name',
                className: 'wrap',
                cell: (p) =>
                  renaming === p.id ? (
                    <RenameForm id={p.id} name={p.name} onDone={() => setRenaming(undefined)} />
                  ) : (
                    <>
                      {p.name}
                      {p.device_type === 'multiDevice' && <span className="muted"> · synced</span>}
                    </>
                  ),
              },
              { header: 'Created', className: 'nowrap', cell: (p) => <RelativeTime at={p.created_at} /> },
              {
                header: 'Last used',
                className: 'nowrap',
                cell: (p) => (p.last_used_at ? <RelativeTime at={p.last_used_at} /> : 'never'),
              },
              {
                ...ACTIONS,
                cell: (p) => (
                  <div className="actions">
                    {renaming !== p.id && (
                      <button type="button" className="button small" onClick={() => setRenaming(p.id)}>
                        Rename
                      </button>
                    )}
                    <ConfirmAction
                      small
                      label="Remove"
                      question={`Remove “${p.name}”? It will no longer sign you in.`}
                      pending={remove.isPending}
                      onConfirm={() => remove.mutate(p.id)}
                    />
                  </div>
                ),
              },
            ]}
          />
        )}
      </QueryView>
    </section>
  );
}
