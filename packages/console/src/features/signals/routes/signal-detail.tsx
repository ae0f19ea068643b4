// The target of every envelope's console_url: /console/signals/<signal_id>.

import { Link, useParams } from 'react-router';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { DeliveryStatusBadge } from '../../../components/delivery-status.tsx';
import { NextRetry } from '../../../components/next-retry.tsx';
import { Page } from '../../../components/page.tsx';
import {
  BlockSkeleton,
  EmptyState,
  QueryStatus,
  QueryView,
  TableSkeleton,
  WriteError,
} from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { useCan } from '../../auth/index.ts';
import { useErasePayload, useSignal, useSignalDeliveries } from '../api/signals.ts';
import { SeverityBadge } from '../components/severity-badge.tsx';

const WEBHOOKS = '/settings/integrations/webhooks';

function Deliveries({ signalId }: { signalId: string }) {
  const deliveries = useSignalDeliveries(signalId);
  return (
    <QueryView
      query={deliveries}
      what="the deliveries"
      pending={<TableSkeleton columns={5} rows={2} label="deliveries" />}
    >
      {(data) => (
        <DataTable
          caption="Deliveries of this signal, one per endpoint"
          rows={data.deliveries}
          rowKey={(d) => d.delivery_id}
          empty={
            <EmptyState title="Not sent to any endpoint">
              <p>No webhook endpoint was enabled when this signal arrived. Add one under Settings, Integrations.</p>
            </EmptyState>
          }
          columns={[
            {
              header: 'Endpoint',
              className: 'wrap',
              cell: (d) => (
                <Link to={`${WEBHOOKS}/${d.endpoint_id}/deliveries/${d.delivery_id}`}>{d.endpoint_name}</Link>
              ),
            },
            { header: 'Status', cell: (d) => <DeliveryStatusBadge status={d.status} /> },
            { header: 'Attempts', cell: (d) => d.attempts },
            { header: 'Last HTTP status', cell: (d) => d.last_status ?? '—' },
            {
              header: 'Completed or next retry',
              className: 'nowrap',
              cell: (d) =>
                d.completed_at ? (
                  <RelativeTime at={d.completed_at} />
                ) : d.next_attempt_at ? (
                  <>
                    retry <NextRetry at={d.next_attempt_at} />
                  </>
                ) : (
                  '—'
                ),
            },
          ]}
        />
      )}
    </QueryView>
  );
}

export function SignalDetailPage() {
  const { signalId = '' } = useParams();
  const signal = useSignal(signalId);
  const canErase = useCan('manageRetention');
  const erase = useErasePayload(signalId);
  const back = { label: 'Back to the list', to: '/signals' };
  if (!signal.isSuccess)
    return (
      <Page title="Signal" back={back}>
        <QueryStatus query={signal} what="this signal" pending={<BlockSkeleton height="16rem" label="the signal" />} />
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
