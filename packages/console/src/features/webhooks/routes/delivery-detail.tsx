import { Link, useParams } from 'react-router';
import { DeliveryStatusBadge } from '../../../components/delivery-status.tsx';
import { NextRetry } from '../../../components/next-retry.tsx';
import { Page } from '../../../components/page.tsx';
import { BlockSkeleton, QueryStatus, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { shortId } from '../../../lib/short-id.ts';
import { gated, useCan } from '../../auth/index.ts';
import { useDelivery, useRedeliver } from '../api/deliveries.ts';
import { useEndpoint } from '../api/endpoints.ts';
import { AttemptItem } from '../components/attempt-detail.tsx';

function DeliveryDetail() {
  const { endpointId = '', deliveryId = '' } = useParams();
  const delivery = useDelivery(deliveryId);
  const endpoint = useEndpoint(endpointId);
  const redeliver = useRedeliver(endpointId);
  const canWrite = useCan('manageWebhooks');
  const back = { label: 'Back to the endpoint', to: `/settings/integrations/webhooks/${endpointId}` };
  if (!delivery.isSuccess)
    return (
      <Page title="Delivery" back={back}>
        <QueryStatus
          query={delivery}
          what="this delivery"
          pending={<BlockSkeleton height="14rem" label="the delivery" />}
        />
      </Page>
    );
  const d = delivery.data;
  const actions = canWrite && (
    <button
      type="button"
      className="button"
      disabled={redeliver.isPending}
      onClick={() => redeliver.mutate(deliveryId)}
    >
      Redeliver
    </button>
  );
  return (
    <Page title={`Delivery ${shortId(d.id)}`} back={back} actions={actions}>
      <WriteError error={redeliver.error} />
      {redeliver.isSuccess && (
        <p className="notice ok" role="status">
          Queued again with the same Guard-Delivery; the new attempt appears below.
        </p>
      )}
      <section className="card" aria-labelledby="delivery-facts">
        <h2 id="delivery-facts">Delivery</h2>
        <dl className="details">
          <dt>Status</dt>
          <dd>
            <DeliveryStatusBadge status={d.status} />
          </dd>
          <dt>Endpoint</dt>
          <dd>
            <Link to={`/settings/integrations/webhooks/${d.endpoint_id}`}>{endpoint.data?.name ?? d.endpoint_id}</Link>
          </dd>
          <dt>Guard-Delivery</dt>
          <dd className="mono">{d.id}</dd>
          <dt>Signal</dt>
          <dd>
            <Link className="mono" to={`/signals/${d.signal_id}`}>
              {d.signal_id}
            </Link>
          </dd>
          <dt>Attempts</dt>
          <dd>{d.attempts}</dd>
          <dt>Next retry</dt>
          <dd>
            <NextRetry at={d.next_attempt_at} />
          </dd>
          <dt>Created</dt>
          <dd>
            <RelativeTime at={d.created_at} />
          </dd>
          <dt>Completed</dt>
          <dd>
            <RelativeTime at={d.completed_at} />
          </dd>
        </dl>
      </section>
      <section aria-labelledby="attempts-heading">
        <h2 id="attempts-heading">Attempts</h2>
        {d.attempt_log.length === 0 ? (
          <p>No attempt yet: the first one starts within seconds.</p>
        ) : (
          <ol className="attempts">
            {[...d.attempt_log].reverse().map((a) => (
              <AttemptItem key={a.attempt} deliveryId={d.id} attempt={a} />
            ))}
          </ol>
        )}
      </section>
    </Page>
  );
}

export default gated('readWebhooks', DeliveryDetail);
