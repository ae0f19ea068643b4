import { type FormEvent, useId, useState } from 'react';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { ShownOnce } from '../../../components/copy-field.tsx';
import { ACTIONS, DataTable } from '../../../components/data-table.tsx';
import { QueryView, TableSkeleton, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { useNow } from '../../../lib/use-now.ts';
import { useApiTokens, useCreateApiToken, useRevokeApiToken } from '../api/account.ts';
import {
  type Access,
  type AreaAccess,
  describeScopes,
  EXPIRIES,
  SCOPE_AREAS,
  type ScopeArea,
  scopesOf,
} from './token-scopes.ts';

const ACCESS_CHOICES: { value: Access; label: string; hint: string }[] = [
  { value: 'full', label: 'Full access', hint: 'everything your role may do' },
  { value: 'read', label: 'Read-only', hint: 'every read your role may do, no change' },
  { value: 'custom', label: 'Custom', hint: 'chosen areas only' },
];

function ScopeChoices({
  access,
  areas,
  onAccess,
  onArea,
  error,
}: {
  access: Access;
  areas: Partial<Record<ScopeArea, AreaAccess>>;
  onAccess: (a: Access) => void;
  onArea: (area: ScopeArea, value: AreaAccess) => void;
  error: string | undefined;
}) {
  const id = useId();
  return (
    <fieldset aria-describedby={error ? `${id}-error` : undefined}>
      <legend>Access</legend>
      {ACCESS_CHOICES.map((c) => (
        <div key={c.value} className="check-row">
          <label className="checkbox">
            <input
              type="radio"
              name={`${id}-access`}
              value={c.value}
              checked={access === c.value}
              onChange={() => onAccess(c.value)}
            />
            {c.label}
            <span className="hint">({c.hint})</span>
          </label>
        </div>
      ))}
      {access === 'custom' && (
        <div className="scope-grid">
          {SCOPE_AREAS.map(({ area, label, writable }) => (
            <div key={area} className="field">
              <label htmlFor={`${id}-${area}`}>{label}</label>
              <select
                id={`${id}-${area}`}
                value={areas[area] ?? 'none'}
                onChange={(e) => onArea(area, e.target.value as AreaAccess)}
              >
                <option value="none">No access</option>
                <option value="read">Read</option>
                {writable && <option value="write">Read and write</option>}
              </select>
            </div>
          ))}
        </div>
      )}
      {error && (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
      <p className="hint">
        A token never has more than your role, and only a full-access credential creates tokens or changes your
        password.
      </p>
    </fieldset>
  );
}

function Expires({ at }: { at: string | null }) {
  const now = useNow();
  if (at === null) return <span>Never</span>;
  if (Date.parse(at) <= now)
    return (
      <strong className="expired">
        Expired <RelativeTime at={at} />
      </strong>
    );
  return <RelativeTime at={at} />;
}

export function ApiTokens() {
  const id = useId();
  const tokens = useApiTokens();
  const create = useCreateApiToken();
  const revoke = useRevokeApiToken();
  const [name, setName] = useState('');
  const [access, setAccess] = useState<Access>('full');
  const [areas, setAreas] = useState<Partial<Record<ScopeArea, AreaAccess>>>({});
  const [days, setDays] = useState<number | null>(90);
  const [scopeError, setScopeError] = useState<string>();
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const scopes = scopesOf(access, areas);
    if (scopes !== undefined && scopes.length === 0) {
      setScopeError('Choose at least one area, or another kind of access.');
      return;
    }
    setScopeError(undefined);
    create.mutate(
      { name: name.trim(), ...(scopes ? { scopes } : {}), expires_in_days: days },
      { onSuccess: () => setName('') },
    );
  };
  return (
    <section className="card" aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Personal API tokens</h2>
      <p>
        For scripts that call the API as you: send <code>Authorization: Bearer &lt;token&gt;</code>. Give each token
        only the access its script needs, and an expiry.
      </p>
      <form className="token-form" onSubmit={onSubmit}>
        <div className="filters">
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
          <div className="field">
            <label htmlFor={`${id}-expiry`}>Expires after</label>
            <select
              id={`${id}-expiry`}
              value={days === null ? 'never' : String(days)}
              onChange={(e) => setDays(e.target.value === 'never' ? null : Number(e.target.value))}
            >
              {EXPIRIES.map((x) => (
                <option key={x.label} value={x.days === null ? 'never' : String(x.days)}>
                  {x.label}
                </option>
              ))}
            </select>
          </div>
        </div>
        <ScopeChoices
          access={access}
          areas={areas}
          onAccess={(a) => {
            setScopeError(undefined);
            setAccess(a);
          }}
          onArea={(area, value) => {
            setScopeError(undefined);
            setAreas((prev) => ({ ...prev, [area]: value }));
          }}
          error={scopeError}
        />
        <button type="submit" className="button primary" disabled={create.isPending}>
          Create token
        </button>
      </form>
      <WriteError error={create.error ?? revoke.error} />
      {create.data && (
        <ShownOnce label="API token" value={create.data.token}>
          Store the token “{create.data.name}” now; Guard keeps only its hash.
        </ShownOnce>
      )}
      <QueryView
        query={tokens}
        what="your API tokens"
        pending={<TableSkeleton columns={6} rows={2} label="API tokens" />}
      >
        {(data) => (
          <DataTable
            caption="Your API tokens"
            rows={data.tokens}
            rowKey={(t) => t.id}
            empty={<p className="hint">You have no API tokens.</p>}
            columns={[
              { header: 'Name', className: 'wrap', cell: (t) => t.name },
              { header: 'Scopes', className: 'wrap', cell: (t) => describeScopes(t.scopes) },
              { header: 'Created', className: 'nowrap', cell: (t) => <RelativeTime at={t.created_at} /> },
              { header: 'Expires', className: 'nowrap', cell: (t) => <Expires at={t.expires_at} /> },
              {
                header: 'Last used',
                className: 'nowrap',
                cell: (t) => <RelativeTime at={t.last_used_at} empty="Never" />,
              },
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
