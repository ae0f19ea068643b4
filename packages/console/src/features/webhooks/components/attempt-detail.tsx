import { useId, useState } from 'react';
import { CodeBlock } from '../../../components/code-block.tsx';
import { CopyButton } from '../../../components/copy-button.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { BlockSkeleton, ErrorNotice } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { prettyJson } from '../../../lib/json-text.ts';
import { plural } from '../../../lib/plural.ts';
import { useAttempt } from '../api/deliveries.ts';

export interface AttemptSummary {
  attempt: number;
  started_at: string;
  duration_ms: number;
  status: number | null;
  error: string | null;
}

function AttemptRequest({ deliveryId, attempt }: { deliveryId: string; attempt: number }) {
  const detail = useAttempt(deliveryId, attempt, true);
  if (detail.isPending) return <BlockSkeleton height="14rem" label={`attempt ${attempt}`} />;
  if (detail.isError)
    return <ErrorNotice error={detail.error} what={`attempt ${attempt}`} onRetry={() => detail.refetch()} />;
  const { request, status, duration_ms, response_excerpt, response_headers, error } = detail.data;
  return (
    <div className="attempt-detail">
      <h4>Request as sent</h4>
      <p className="mono wrap-anywhere">
        {request.method} {request.url}
      </p>
      <DataTable
        caption={`Request headers of attempt ${attempt}`}
        rows={Object.entries(request.headers)}
        rowKey={([name]) => name}
        columns={[
          { header: 'Header', className: 'mono nowrap', cell: ([name]) => name },
          { header: 'Value', className: 'mono wrap', cell: ([, value]) => value },
        ]}
      />
      <div className="code-heading">
        <h5 className="label">Body</h5>
        <CopyButton text={request.body} label={`Copy the body of attempt ${attempt}`} />
      </div>
      <p className="hint">Shown indented; the copy is the exact bytes that were signed and sent.</p>
      <CodeBlock label={`Request body of attempt ${attempt}`} wrap>
        {prettyJson(request.body)}
      </CodeBlock>
      <h4>{status === null ? 'Error' : 'Response'}</h4>
      {status === null && error ? (
        <div className="notice error">
          <p className="mono">{error}</p>
        </div>
      ) : status !== null ? (
        <>
          <p>
            HTTP {status} in {duration_ms} ms
          </p>
          <ResponseHeaders attempt={attempt} kept={response_headers} />
          <h5 className="label">Body (the first 1 KiB)</h5>
          {response_excerpt ? (
            <CodeBlock label={`Response body of attempt ${attempt} (excerpt)`} wrap>
              {prettyJson(response_excerpt)}
            </CodeBlock>
          ) : (
            <p className="hint">The response had no body.</p>
          )}
        </>
      ) : (
        <p className="hint">No response was recorded.</p>
      )}
    </div>
  );
}

function ResponseHeaders({
  attempt,
  kept,
}: {
  attempt: number;
  kept: { headers: Record<string, string>; omitted: number } | null;
}) {
  if (!kept) return <p className="hint">Its headers were not recorded (an attempt made before Guard kept them).</p>;
  return (
    <>
      <h5 className="label">Headers</h5>
      <DataTable
        caption={`Response headers of attempt ${attempt}`}
        rows={Object.entries(kept.headers)}
        rowKey={([name]) => name}
        columns={[
          { header: 'Header', className: 'mono nowrap', cell: ([name]) => name },
          { header: 'Value', className: 'mono wrap', cell: ([, value]) => value },
        ]}
      />
      <p className="hint">
        Values of headers that may carry a credential (cookies, tokens, keys) are never stored: they read [masked].
        {kept.omitted > 0 &&
          ` ${plural(kept.omitted, 'more header was', 'more headers were')} left out (4 KiB are kept).`}
      </p>
    </>
  );
}

/** One attempt: its outcome in a line, and on request the full request and response. */
export function AttemptItem({ deliveryId, attempt }: { deliveryId: string; attempt: AttemptSummary }) {
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const ok = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
  return (
    <li className="card attempt">
      <div className="attempt-line">
        <h3>Attempt {attempt.attempt}</h3>
        <span className={`badge ${ok ? 'ok' : 'danger'}`}>
          {attempt.status !== null ? `HTTP ${attempt.status}` : 'no response'}
        </span>
        <span>
          <RelativeTime at={attempt.started_at} />, {attempt.duration_ms} ms
        </span>
        <button
          type="button"
          className="button small"
          aria-expanded={open}
          aria-controls={panelId}
          onClick={() => setOpen((o) => !o)}
        >
          {open ? 'Hide' : 'Show'} request and response
        </button>
      </div>
      {attempt.error && <p className="mono hint">{attempt.error}</p>}
      <div id={panelId}>{open && <AttemptRequest deliveryId={deliveryId} attempt={attempt.attempt} />}</div>
    </li>
  );
}
