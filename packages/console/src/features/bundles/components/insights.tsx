import { Link } from 'react-router';
import { BlockSkeleton, ErrorNotice } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { evidencePath, useInsights } from '../api/bundles.ts';

const TONES: Record<string, string> = { critical: 'danger', error: 'danger', warning: 'warn', info: 'info' };

/** The service's findings for a bundle, each with links to its evidence lines in context. */
export function Insights({ bundleId }: { bundleId: string }) {
  const insights = useInsights(bundleId);
  return (
    <section aria-labelledby="bundle-insights">
      <h2 id="bundle-insights">Insights</h2>
      {insights.isPending ? (
        <BlockSkeleton height="8rem" label="the insights" />
      ) : insights.isError ? (
        <ErrorNotice error={insights.error} what="the insights" onRetry={() => insights.refetch()} />
      ) : insights.data.state === 'pending' ? (
        <p role="status">The service is analysing this bundle…</p>
      ) : (
        <>
          <p className="hint">
            {insights.data.findings.length} {insights.data.findings.length === 1 ? 'finding' : 'findings'}, worst first
            {insights.data.analysed_at && (
              <>
                {' '}
                (analysed <RelativeTime at={insights.data.analysed_at} />)
              </>
            )}
            .
          </p>
          <ul className="findings">
            {insights.data.findings.map((f, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: findings have no id; their order is fixed
              <li key={i} className="card finding">
                <h3>
                  <span className={`badge ${TONES[f.severity] ?? 'info'}`}>{f.severity}</span> {f.title}
                </h3>
                <p>{f.detail}</p>
                {f.evidence.length > 0 && (
                  <p className="evidence">
                    Evidence:{' '}
                    {f.evidence.map((e, j) => (
                      <span key={`${e.member}:${e.line ?? 0}`}>
                        {j > 0 && ', '}
                        {e.line === undefined ? (
                          <span className="mono">{e.member}</span>
                        ) : (
                          <Link to={evidencePath(bundleId, e.member, e.line)} className="mono">
                            {e.member} line {e.line}
                          </Link>
                        )}
                      </span>
                    ))}
                  </p>
                )}
                <span className="visually-hidden">Code {f.code}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
