// The target of every envelope's console_url: /console/signals/<signal_id>.

import { Link, useParams } from 'react-router';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { DeliveryStatusBadge } from '../../../components/delivery-status.tsx';
import { Page } from '../../../components/page.tsx';
import {
  BlockSkeleton,
  EmptyState,
  ErrorNotice,
  TableSkeleton,
  WriteError,
} from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TableWrap } from '../../../components/table-wrap.tsx';
import { useCan } from '../../auth/index.ts';
import { useErasePayload, useSignal, useSignalDeliveries } from '../api/signals.ts';
import { SeverityBadge } from '../components/severity-badge.tsx';

const WEBHOOKS = '/settings/integrations/webhooks';

function Deliveries({ signalId }: { signalId: string }) {
  const deliveries = useSignalDeliveries(signalId);
  if (deliveries.isPending) return <TableSkeleton columns={5} rows={2} label="deliveries" />;
  if (deliveries.isError)
    return <ErrorNotice error={deliveries.error} what="the deliveries" onRetry={() => deliveries.refetch()} />;
  if (deliveries.data.deliveries.length === 0)
    return (
      <EmptyState title="Not sent to any endpoint">
        <p>No webhook endpoint was enabled when this signal arrived. Add one under Settings, Integrations.</p>
      </EmptyState>
    );
  return (
    <TableWrap>
      <table>
        <caption className="visually-hidden">Deliveries of this signal, one per endpoint</caption>
        <thead>
          <tr>
            <th scope="col">Endpoint</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last HTTP status</th>
            <th scope="col">Completed or next retry</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.data.deliveries.map((d) => (
            <tr key={d.delivery_id}>
              <td className="wrap">
                <Link to={`${WEBHOOKS}/${d.endpoint_id}/deliveries/${d.delivery_id}`}>{d.endpoint_name}</Link>
              </td>
              <td>
                <DeliveryStatusBadge status={d.status} />
              </td>
              <td>{d.attempts}</td>
              <td>{d.last_status ?? '—'}</td>
              <td className="nowrap">
                {d.completed_at ? (
                  <RelativeTime at={d.completed_at} />
                ) : d.next_attempt_at ? (
                  <>
                    retry <RelativeTime at={d.next_attempt_at} />
                  </>
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

export function SignalDetailPage() {
  const { signalId = '' } = useParams();
  const signal = useSignal(signalId);
  const canErase = useCan('manageRetention');
  const erase = useErasePayload(signalId);
  const back = { label: 'Back to the list', to: '/signals' };
  if (signal.isPending)
    return (
      <Page title="Signal" back={back}>
        <BlockSkeleton height="16rem" label="the signal" />
      </Page>
    );
  if (signal.isError)
    return (
      <Page title="Signal" back={back}>
        <ErrorNotice error={signal.error} what="this signal" onRetry={() => signal.refetch()} />
      </Page>
    );
  const s = signal.data;
  const actions = canErase && !s.erased_at && (
    <ConfirmAction
      label="Erase payload"
      question="Erase this signal's description and identity, and what its deliveries stored? Deliveries not yet sent are stopped. This cannot be undone; the signal stays listed as erased."
      pending={erase.isPending}
      onConfirm={() => erase.mutate()}
    />
  );
  return (
    <Page title={s.erased_at ? 'Signal (payload erased)' : s.description} back={back} actions={actions}>
      <WriteError error={erase.error} />
      {s.erased_at && (
        <p className="notice info" role="status">
          The payload of this signal was erased <RelativeTime at={s.erased_at} />: its description and identity are
          gone, and so is what its deliveries stored. The erasure is in the audit log.
        </p>
      )}
      <section className="card" aria-labelledby="signal-facts">
        <h2 id="signal-facts">Signal</h2>
        <dl className="details">
          <dt>Severity</dt>
          <dd>
            <SeverityBadge severity={s.severity} /> {s.severity} of 5
          </dd>
          <dt>Type</dt>
          <dd className="mono">{s.signal_type}</dd>
          <dt>Server</dt>
          <dd>
            {s.server_name} <span className="mono hint">{s.server_id}</span>
          </dd>
          <dt>Environment</dt>
          <dd>{s.environment || '—'}</dd>
          <dt>Identity</dt>
          <dd>
            {s.erased_at ? (
              'erased'
            ) : (
              <>
                {s.identity_name} <span className="mono hint">{s.identity_id}</span>
              </>
            )}
          </dd>
          <dt>Happened</dt>
          <dd>
            <RelativeTime at={s.created_at} />
          </dd>
          <dt>Received</dt>
          <dd>
            <RelativeTime at={s.received_at} />
          </dd>
          <dt>Signal ID</dt>
          <dd className="mono">{s.signal_id}</dd>
        </dl>
      </section>
      <section aria-labelledby="signal-deliveries">
        <h2 id="signal-deliveries">Webhook deliveries</h2>
        <Deliveries signalId={signalId} />
      </section>
    </Page>
  );
}

export default SignalDetailPage;
