import { useParams, useSearchParams } from 'react-router';
import { Page } from '../../../components/page.tsx';
import { BlockSkeleton, ErrorNotice } from '../../../components/query-states.tsx';
import { gated } from '../../auth/index.ts';
import { useMemberLines } from '../api/bundles.ts';

/** Lines shown before and after the evidence line. */
const CONTEXT = 10;

function BundleLines() {
  const { bundleId = '' } = useParams();
  const [params] = useSearchParams();
  const member = params.get('member') ?? '';
  const line = Number(params.get('line') ?? '0');
  const lines = useMemberLines(bundleId, member, line, CONTEXT);
  const back = { label: 'Back to the bundle', to: `/support/bundles/${encodeURIComponent(bundleId)}` };
  const title = `${member}, line ${line}`;
  return (
    <Page title={title} back={back} description="The evidence line, highlighted, with the lines around it.">
      {lines.isPending ? (
        <BlockSkeleton height="24rem" label="the lines" />
      ) : lines.isError ? (
        <ErrorNotice error={lines.error} what="these lines" onRetry={() => lines.refetch()} />
      ) : (
        <section className="card" aria-label={`Lines of ${member}`}>
          <ol className="lines" start={lines.data.first_line}>
            {lines.data.lines.map((text, i) => {
              const n = lines.data.first_line + i;
              return n === line ? (
                <li key={n} className="hit" aria-current="true">
                  <mark>{text || ' '}</mark>
                </li>
              ) : (
                <li key={n}>{text || ' '}</li>
              );
            })}
          </ol>
        </section>
      )}
    </Page>
  );
}

export default gated('readBundles', BundleLines);
