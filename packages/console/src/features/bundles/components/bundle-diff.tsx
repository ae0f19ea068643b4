import { useState } from 'react';
import { Link } from 'react-router';
import { DataTable } from '../../../components/data-table.tsx';
import { BlockSkeleton, ErrorNotice } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { formatBytes } from '../../../lib/bytes.ts';
import { useBundleDiff } from '../api/bundles.ts';

const CHANGE_TONES: Record<string, string> = { added: 'ok', removed: 'danger', changed: 'warn', same: 'neutral' };

/** A system.json value as a person reads it: sizes in bytes formatted, null as "not read". */
function showValue(field: string, value: string | number | boolean | null): string {
  if (value === null) return 'not read';
  if (typeof value === 'number' && field.endsWith('_bytes')) return formatBytes(value);
  return String(value);
}

/** Codes the server answers when there is nothing to compare (yet): said plainly, no retry. */
const ANSWERS = new Set(['no_previous_bundle', 'analysis_pending', 'same_bundle']);

/**
 * Compare with previous: what changed since the same server's previous bundle — members
 * added, removed or changed; findings new and resolved; system.json's fields that changed.
 */
export function BundleComparison({ bundleId }: { bundleId: string }) {
  const [open, setOpen] = useState(false);
  const diff = useBundleDiff(bundleId, undefined, open);
  return (
    <section aria-labelledby="bundle-diff">
      <h2 id="bundle-diff">Compare with previous</h2>
      {!open ? (
        <p>
          <button type="button" className="button" onClick={() => setOpen(true)}>
            Compare with previous
          </button>{' '}
          <span className="hint">against the same server's bundle uploaded before this one</span>
        </p>
      ) : diff.isPending ? (
        <BlockSkeleton height="8rem" label="the comparison" />
      ) : diff.isError ? (
        diff.error instanceof ApiError && ANSWERS.has(diff.error.code) ? (
          <p role="status">{diff.error.message}</p>
        ) : (
          <ErrorNotice error={diff.error} what="the comparison" onRetry={() => diff.refetch()} />
        )
      ) : (
        <Comparison diff={diff.data} />
      )}
    </section>
  );
}

type Diff = NonNullable<ReturnType<typeof useBundleDiff>['data']>;

function Comparison({ diff }: { diff: Diff }) {
  const moved = diff.members.filter((m) => m.change !== 'same');
  const same = diff.members.length - moved.length;
  return (
    <>
      <p>
        Against <Link to={`/support/bundles/${encodeURIComponent(diff.against)}`}>bundle {diff.against}</Link>, uploaded{' '}
        <RelativeTime at={diff.against_uploaded_at} />.
      </p>
      <div className="card-grid">
        <section className="card" aria-labelledby="diff-members">
          <h3 id="diff-members">Members</h3>
          {moved.length === 0 ? (
            <p>All {same} members are the same.</p>
          ) : (
            <>
              <DataTable
                caption="Members added, removed or changed"
                rows={moved}
                rowKey={(m) => m.name}
                columns={[
                  { header: 'Member', className: 'mono nowrap', cell: (m) => m.name },
                  {
                    header: 'Change',
                    cell: (m) => <span className={`badge ${CHANGE_TONES[m.change]}`}>{m.change}</span>,
                  },
                ]}
              />
              {same > 0 && (
                <p className="hint">
                  {same} {same === 1 ? 'member is' : 'members are'} the same.
                </p>
              )}
            </>
          )}
        </section>
        <section className="card" aria-labelledby="diff-findings">
          <h3 id="diff-findings">Findings</h3>
          <FindingCodes label="New" codes={diff.findings.new} none="No new finding." />
          <FindingCodes label="Resolved" codes={diff.findings.resolved} none="None resolved." />
        </section>
      </div>
      <section aria-labelledby="diff-system">
        <h3 id="diff-system">System fields that changed</h3>
        {diff.system_changes === null ? (
          <p>
            Not known: the system.json of one of the two bundles was not read (it has none, or it was analysed before
            the service kept its fields).
          </p>
        ) : diff.system_changes.length === 0 ? (
          <p>None of the compared system.json fields changed.</p>
        ) : (
          <DataTable
            caption="system.json fields that changed"
            rows={diff.system_changes}
            rowKey={(c) => c.field}
            columns={[
              { header: 'Field', className: 'mono nowrap', cell: (c) => c.field },
              { header: 'Before', className: 'mono wrap', cell: (c) => showValue(c.field, c.before) },
              { header: 'After', className: 'mono wrap', cell: (c) => showValue(c.field, c.after) },
            ]}
          />
        )}
      </section>
    </>
  );
}

function FindingCodes({ label, codes, none }: { label: string; codes: string[]; none: string }) {
  return (
    <>
      <h4>{label}</h4>
      {codes.length === 0 ? (
        <p>{none}</p>
      ) : (
        <ul aria-label={`${label} findings`}>
          {codes.map((c) => (
            <li key={c} className="mono">
              {c}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
