import { useId, useState } from 'react';
import { CodeBlock } from '../../../components/code-block.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { BlockSkeleton, ErrorNotice } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
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
  const { request, status, duration_ms, response_excerpt, error } = detail.data;
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
      <h5 className="label">Body, exactly the bytes signed</h5>
      <CodeBlock label={`Request body of attempt ${attempt}`} wrap>
        {request.body}
      </CodeBlock>
      <h4>{error ? 'Error' : 'Response'}</h4>
      {error ? (
        <div className="notice error">
          <p className="mono">{error}</p>
        </div>
      ) : status !== null ? (
        <>
          <p>
            HTTP {status} in {duration_ms} ms
          </p>
          {response_excerpt ? (
            <CodeBlock label={`Response body of attempt ${attempt} (excerpt)`}>{response_excerpt}</CodeBlock>
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
