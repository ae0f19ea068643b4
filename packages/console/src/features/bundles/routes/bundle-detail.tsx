import type { ReactNode } from 'react';
import { useParams } from 'react-router';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Page } from '../../../components/page.tsx';
import { BlockSkeleton, QueryStatus, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { formatBytes } from '../../../lib/bytes.ts';
import { gated, useCan } from '../../auth/index.ts';
import { useAnalyseAgain } from '../api/analyzers.ts';
import { bundleDownloadUrl, deletedBy, useBundle, useDeleteBundle, useInsights } from '../api/bundles.ts';
import { BundleComparison } from '../components/bundle-diff.tsx';
import { Insights } from '../components/insights.tsx';

const BACK = { label: 'Back to the list', to: '/support/bundles' };

type Bundle = NonNullable<ReturnType<typeof useBundle>['data']>;

/** The bundle's record: what the list shows and more; `children` adds rows after Uploaded. */
function BundleSummary({ b, children }: { b: Bundle; children?: ReactNode }) {
  return (
    <section className="card" aria-labelledby="bundle-summary">
      <h2 id="bundle-summary">Summary</h2>
      <dl className="details">
        <dt>Server</dt>
        <dd>
          {b.hostname} <span className="mono hint">{b.agent_id}</span>
        </dd>
        <dt>Tenant</dt>
        <dd className="mono">{b.tenant_id}</dd>
        <dt>Trigger</dt>
        <dd className="mono">{b.trigger}</dd>
        <dt>Agent version</dt>
        <dd className="mono">{b.agent_version}</dd>
        <dt>Uploaded</dt>
        <dd>
          <RelativeTime at={b.uploaded_at} />
        </dd>
        {children}
        <dt>File SHA-256</dt>
        <dd className="mono">{b.sha256}</dd>
      </dl>
    </section>
  );
}

/**
 * A deleted bundle: the record that it existed and who deleted it, when and why — never its
 * content (the server keeps no manifest, file or findings of it to show).
 */
function DeletedBundle({ b }: { b: Bundle & { deleted: NonNullable<Bundle['deleted']> } }) {
  return (
    <Page title={b.filename} back={BACK} description={`From ${b.hostname}`}>
      <div className="notice warn" role="status">
        <p>
          <span className="badge danger">Deleted</span> <RelativeTime at={b.deleted.at} /> {deletedBy(b.deleted)}. Its
          file and findings are gone; this record stays.
        </p>
      </div>
      <BundleSummary b={b}>
        <dt>Deleted</dt>
        <dd>
          <RelativeTime at={b.deleted.at} /> {deletedBy(b.deleted)}
        </dd>
      </BundleSummary>
    </Page>
  );
}

/** The admin's Delete, asked twice; the page then shows the bundle as deleted. */
function DeleteBundle({ id }: { id: string }) {
  const remove = useDeleteBundle(id);
  return (
    <>
      <ConfirmAction
        label="Delete"
        question="Delete this bundle? Its file is removed from storage and its findings go; support staff see only that it was deleted, by you, now. This cannot be undone."
        pending={remove.isPending}
        onConfirm={() => remove.mutate()}
      />
      <WriteError error={remove.error} />
    </>
  );
}

/** Analyses the bundle again with today's analyzers and rules; the insights follow it until done. */
function AnalyseAgain({ id }: { id: string }) {
  const again = useAnalyseAgain(id);
  return (
    <>
      <button type="button" className="button" disabled={again.isPending} onClick={() => again.mutate()}>
        Analyse again
      </button>
      <WriteError error={again.error} />
    </>
  );
}

function BundleDetail() {
  const { bundleId = '' } = useParams();
  const bundle = useBundle(bundleId);
  // Read with the bundle, so that the page is drawn once with its findings: the list of them
  // arriving later would push everything below it (the Insights section reads the same query).
  const insights = useInsights(bundleId);
  const mayDelete = useCan('deleteBundles');
  const mayAnalyse = useCan('analyseBundles');
  if (!bundle.isSuccess || insights.isPending) {
    const skeleton = <BlockSkeleton height="24rem" label="the bundle" />;
    return (
      <Page title="Bundle" back={BACK}>
        {bundle.isSuccess ? skeleton : <QueryStatus query={bundle} what="this bundle" pending={skeleton} />}
      </Page>
    );
  }
  const b = bundle.data;
  if (b.deleted) return <DeletedBundle b={{ ...b, deleted: b.deleted }} />;
  const m = b.manifest;
  if (!m) return null; // only a deleted bundle comes without its manifest
  const actions = (
    <>
      <a className="button primary" href={bundleDownloadUrl(b.bundle_id)} download={b.filename}>
        Download bundle ({formatBytes(b.size)})
      </a>
      {mayAnalyse && <AnalyseAgain id={b.bundle_id} />}
      {mayDelete && <DeleteBundle id={b.bundle_id} />}
    </>
  );
  return (
    <Page title={b.filename} back={BACK} actions={actions} description={`From ${b.hostname}`}>
      <BundleSummary b={b}>
        <dt>Bundle version</dt>
        <dd className="mono">{m.bundle_version}</dd>
        <dt>Collected</dt>
        <dd>
          <RelativeTime at={m.generated_at} />
        </dd>
      </BundleSummary>

      <Insights bundleId={b.bundle_id} />

      <section aria-labelledby="bundle-contents">
        <h2 id="bundle-contents">Contents</h2>
        <DataTable
          caption="Members of the bundle, with the size and SHA-256 stored"
          rows={m.contents}
          rowKey={(c) => c.name}
          columns={[
            { header: 'Member', className: 'mono nowrap', cell: (c) => c.name },
            { header: 'Size', className: 'nowrap', cell: (c) => formatBytes(c.size) },
            { header: 'SHA-256', className: 'mono wrap', cell: (c) => c.sha256 },
            { header: 'Values masked', cell: (c) => m.redaction.members[c.name] ?? '—' },
          ]}
        />
      </section>

      <div className="card-grid">
        <section className="card" aria-labelledby="bundle-trimmed">
          <h2 id="bundle-trimmed">Trimmed segments</h2>
          {m.trimmed_segments.length === 0 ? (
            <p>None: every rotated log segment fitted under the 180 MiB cap.</p>
          ) : (
            <>
              <p>Left out because the bundle would have gone over the 180 MiB cap:</p>
              <ul>
                {m.trimmed_segments.map((s) => (
                  <li key={s} className="mono">
                    {s}
                  </li>
                ))}
              </ul>
            </>
          )}
        </section>
        <section className="card" aria-labelledby="bundle-redaction">
          <h2 id="bundle-redaction">Redaction</h2>
          <p>
            {m.redaction.values_masked} {m.redaction.values_masked === 1 ? 'value' : 'values'} masked in log attributes
            whose key matches <code>{m.redaction.pattern}</code>
            {m.redaction.extra_keys && m.redaction.extra_keys.length > 0 && (
              <>
                {' '}
                and the extra keys <code>{m.redaction.extra_keys.join(', ')}</code>
              </>
            )}
            . Host names, addresses and paths are not masked.
          </p>
        </section>
        <section className="card" aria-labelledby="bundle-errors">
          <h2 id="bundle-errors">Collection errors</h2>
          {m.collection_errors.length === 0 ? (
            <p>None: every source was collected.</p>
          ) : (
            <ul>
              {m.collection_errors.map((e) => (
                <li key={`${e.source}:${e.message}`}>
                  <span className="mono">{e.source}</span>: {e.message}
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>

      {/* Last: what it shows when asked grows the page below nothing, so nothing moves under the reader. */}
      <BundleComparison bundleId={b.bundle_id} />
    </Page>
  );
}

export default gated('readBundles', BundleDetail);
