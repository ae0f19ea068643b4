// Enrolment tokens (admin): create one — shown once, with the command to paste on the
// server — list them, revoke one.

import { type FormEvent, useId, useState } from 'react';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { CopyField } from '../../../components/copy-field.tsx';
import { ACTIONS, DataTable } from '../../../components/data-table.tsx';
import { EmptyState, QueryView, TableSkeleton, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { useCreateEnrollmentToken, useEnrollmentTokens, useRevokeEnrollmentToken } from '../api/servers.ts';

const LIFETIMES = [
  { seconds: 3600, label: '1 hour' },
  { seconds: 24 * 3600, label: '1 day' },
  { seconds: 7 * 24 * 3600, label: '7 days' },
  { seconds: 30 * 24 * 3600, label: '30 days' },
];

function CreateToken() {
  const id = useId();
  const create = useCreateEnrollmentToken();
  const [lifetime, setLifetime] = useState(LIFETIMES[1].seconds);
  const [uses, setUses] = useState(1);
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ expires_in_seconds: lifetime, max_uses: uses });
  };
  return (
    <div className="card">
      <h3>New enrolment token</h3>
      <form className="filters" onSubmit={onSubmit}>
        <div className="field">
          <label htmlFor={`${id}-life`}>Valid for</label>
          <select id={`${id}-life`} value={lifetime} onChange={(e) => setLifetime(Number(e.target.value))}>
            {LIFETIMES.map((l) => (
              <option key={l.seconds} value={l.seconds}>
                {l.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-uses`}>Servers it may enrol</label>
          <input
            id={`${id}-uses`}
            type="number"
            min={1}
            max={100000}
            value={uses}
            onChange={(e) => setUses(Math.max(1, Number(e.target.value) || 1))}
          />
        </div>
        <button type="submit" className="button primary" disabled={create.isPending}>
          Create enrolment token
        </button>
      </form>
      <WriteError error={create.error} />
      {create.data && (
        <div>
          <div className="notice warn">
            <p>
              <strong>Shown only once.</strong> Run the command on each server you enrol, then paste the token when it
              asks (it reads the token from standard input, so it stays out of your shell history).
            </p>
          </div>
          <CopyField label="Enrolment token" value={create.data.token} copyLabel="Copy token" />
          <CopyField label="Enrol command" value={create.data.enroll_command} copyLabel="Copy command" />
        </div>
      )}
    </div>
  );
}

export function EnrollmentTokens() {
  const tokens = useEnrollmentTokens(true);
  const revoke = useRevokeEnrollmentToken();
  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Enrolment tokens</h2>
      <p>An agent exchanges a token for its own API key once, when it enrols.</p>
      <CreateToken />
      <WriteError error={revoke.error} />
      <QueryView
        query={tokens}
        what="the enrolment tokens"
        pending={<TableSkeleton columns={5} rows={2} label="enrolment tokens" />}
      >
        {(data) => (
          <DataTable
            caption="Enrolment tokens"
            rows={data.tokens}
            rowKey={(t) => t.id}
            empty={
              <EmptyState title="No enrolment tokens">
                <p>Create one above to enrol your first server.</p>
              </EmptyState>
            }
            columns={[
              { header: 'Token', className: 'mono', cell: (t) => t.id },
              { header: 'Uses', cell: (t) => `${t.uses} of ${t.max_uses}` },
              { header: 'Expires', className: 'nowrap', cell: (t) => <RelativeTime at={t.expires_at} /> },
              { header: 'Created', className: 'nowrap', cell: (t) => <RelativeTime at={t.created_at} /> },
              {
                ...ACTIONS,
                cell: (t) =>
                  t.revoked ? (
                    <span className="badge neutral">revoked</span>
                  ) : (
                    <ConfirmAction
                      small
                      label="Revoke"
                      question="Revoke this token? Agents already enrolled keep working; no new one can enrol with it."
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
