// Fleets: ask many servers for a support bundle at once. Above the servers table, "Select all
// shown" and "Request bundles" for the ticked servers; below it, "Request by filter"
// (environment, agent version, offline since), previewed by the server's dry run before
// anything is asked. Either opens the batch's page. Support staff ask one tenant's servers
// per batch (the server keeps a batch to one tenant).

import { type FormEvent, useId, useState } from 'react';
import { useNavigate } from 'react-router';
import { plural } from '../../../lib/plural.ts';
import {
  type BatchFilter,
  type BatchSelection,
  type PreviewShape,
  type SkippedShape,
  useCreateBatch,
  usePreviewBatch,
} from '../api/batches.ts';
import type { ServerRow } from './server-table.tsx';

const REASONS: Record<SkippedShape['reason'], string> = {
  not_found: 'not found',
  revoked: 'revoked',
  open_request: 'a request already open',
  offline: 'offline',
};

/** "2 skipped: 1 offline, 1 revoked" */
export function skippedSummary(skipped: SkippedShape[]): string {
  if (skipped.length === 0) return 'none skipped';
  const counts = new Map<string, number>();
  for (const s of skipped) counts.set(REASONS[s.reason], (counts.get(REASONS[s.reason]) ?? 0) + 1);
  return `${skipped.length} skipped: ${[...counts].map(([r, n]) => `${n} ${r}`).join(', ')}`;
}

function useOpenBatch() {
  const create = useCreateBatch();
  const navigate = useNavigate();
  const ask = (body: BatchSelection) =>
    create.mutate(body, { onSuccess: (batch) => navigate(`/bundle-batches/${encodeURIComponent(batch.id)}`) });
  return { ask, create };
}

/** The toolbar over the table: select all shown, and request bundles from the selection. */
export function SelectionBar({
  servers,
  selected,
  onSelectAll,
}: {
  servers: ServerRow[];
  selected: ReadonlySet<string>;
  onSelectAll: (on: boolean) => void;
}) {
  const { ask, create } = useOpenBatch();
  const [problem, setProblem] = useState<string | undefined>();
  const selectable = servers.filter((s) => !s.revoked_at);
  const all = selectable.length > 0 && selectable.every((s) => selected.has(s.id));
  const chosen = servers.filter((s) => selected.has(s.id));
  const tenants = [...new Set(chosen.map((s) => s.tenant_id))];
  const request = () => {
    setProblem(undefined);
    if (tenants.length > 1) {
      setProblem('A batch asks the servers of one tenant: select servers of one tenant only.');
      return;
    }
    ask({ server_ids: chosen.map((s) => s.id), tenant_id: tenants[0] });
  };
  return (
    <div className="selection-bar">
      <div className="actions">
        <label className="checkbox">
          <input type="checkbox" checked={all} onChange={(e) => onSelectAll(e.target.checked)} /> Select all shown
        </label>
        <button
          type="button"
          className="button primary small"
          disabled={chosen.length === 0 || create.isPending}
          onClick={request}
        >
          Request bundles{chosen.length > 0 ? ` (${chosen.length})` : ''}
        </button>
        <span className="hint" aria-live="polite">
          {chosen.length === 0
            ? 'Tick servers to ask them all at once.'
            : `${plural(chosen.length, 'server')} selected`}
        </span>
      </div>
      {(problem || create.error) && (
        <p className="notice error" role="alert">
          Could not request the bundles: {problem ?? create.error?.message}
        </p>
      )}
    </div>
  );
}

/** Request by filter: preview how many servers match, then ask them. */
export function RequestByFilter({ tenants }: { tenants: string[] | undefined }) {
  const id = useId();
  const preview = usePreviewBatch();
  const { ask, create } = useOpenBatch();
  const [asked, setAsked] = useState<BatchSelection | undefined>();
  const onPreview = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim() || undefined;
    const filter: BatchFilter = {};
    for (const key of ['environment', 'agent_version', 'offline_since'] as const) {
      const v = text(key);
      if (v !== undefined) filter[key] = v;
    }
    const body: BatchSelection = { filter, tenant_id: text('tenant_id') };
    setAsked(body);
    preview.mutate(body);
  };
  const result: PreviewShape | undefined = preview.data;
  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Request by filter</h2>
      <p className="hint">
        Ask every server that matches; empty fields match any. Without “offline since”, online servers are asked and
        offline ones skipped; with it (a duration such as 24h or 7d, or a time such as 2026-11-27T08:00:00Z), the
        servers not seen since then are asked, and each request waits an hour for its agent.
      </p>
      <form className="filters" aria-label="Request by filter" onSubmit={onPreview}>
        {tenants && (
          <div className="field">
            <label htmlFor={`${id}-tenant`}>Tenant</label>
            <select id={`${id}-tenant`} name="tenant_id" required>
              {tenants.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </div>
        )}
        <div className="field">
          <label htmlFor={`${id}-env`}>Environment</label>
          <input id={`${id}-env`} name="environment" placeholder="any" />
        </div>
        <div className="field">
          <label htmlFor={`${id}-version`}>Agent version</label>
          <input id={`${id}-version`} name="agent_version" placeholder="any" />
        </div>
        <div className="field wide">
          <label htmlFor={`${id}-offline`}>Offline since</label>
          <input id={`${id}-offline`} name="offline_since" placeholder="e.g. 24h or 7d" />
        </div>
        <button type="submit" className="button" disabled={preview.isPending}>
          Preview
        </button>
      </form>
      {preview.error && (
        <p className="notice error" role="alert">
          Could not preview: {preview.error.message}
        </p>
      )}
      {result && asked && (
        <div className="notice info" role="status" aria-label="Preview">
          <p>
            <strong>{plural(result.servers.length, 'server')} match</strong>
            {result.servers.length > 0 && `: ${result.servers.map((s) => s.hostname).join(', ')}`}.{' '}
            {skippedSummary(result.skipped)}.
          </p>
          {result.servers.length > 0 && (
            <button type="button" className="button primary" disabled={create.isPending} onClick={() => ask(asked)}>
              Request {plural(result.servers.length, 'bundle')}
            </button>
          )}
        </div>
      )}
      {create.error && (
        <p className="notice error" role="alert">
          Could not request the bundles: {create.error.message}
        </p>
      )}
    </section>
  );
}
