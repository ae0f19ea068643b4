import { useEffect, useId, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../components/delivery-status.tsx';
import { Page } from '../../../components/page.tsx';
import { Pager } from '../../../components/pager.tsx';
import {
  BlockSkeleton,
  EmptyState,
  ErrorNotice,
  QueryView,
  TableSkeleton,
  WriteError,
} from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { useKeysetPager } from '../../../lib/keyset-pager.ts';
import { plural } from '../../../lib/plural.ts';
import { gated, useCan } from '../../auth/index.ts';
import { useDeliveries, useRedeliver } from '../api/deliveries.ts';
import { useDeleteEndpoint, useEndpoint, useSendTestEvent, useUpdateEndpoint } from '../api/endpoints.ts';
import { useReplays } from '../api/replays.ts';
import { DeliveriesTable } from '../components/deliveries-table.tsx';
import { EndpointHealth } from '../components/endpoint-health.tsx';
import { ReplayPanel } from '../components/replay-panel.tsx';
import { SecretReveal } from '../components/secret-reveal.tsx';
import { SecretRotation } from '../components/secret-rotation.tsx';
import { CertificateNotice, TransportFacts } from '../components/transport-facts.tsx';
import { VerifySample } from '../components/verify-sample.tsx';
import { WEBHOOKS_PATH } from '../components/webhooks-nav.tsx';
import { forgetSecret, peekSecret } from '../secret-once.ts';

const LIST = WEBHOOKS_PATH;
const BACK = { label: 'Back to the endpoints', to: LIST };

/** The secret of an endpoint created a moment ago, held by this page until it is left. */
function useSecretOnce(endpointId: string): [string | undefined, () => void] {
  const [secret, setSecret] = useState(() => peekSecret(endpointId));
  useEffect(() => () => forgetSecret(endpointId), [endpointId]);
  return [
    secret,
    () => {
      forgetSecret(endpointId);
      setSecret(undefined);
    },
  ];
}

function Deliveries({ endpointId, canWrite }: { endpointId: string; canWrite: boolean }) {
  const filterId = useId();
  const [status, setStatus] = useState<DeliveryStatus>();
  const pager = useKeysetPager();
  const deliveries = useDeliveries(endpointId, status, pager.before);
  const redeliver = useRedeliver(endpointId);
  return (
    <section aria-labelledby="deliveries-heading">
      <div className="page-header">
        <h2 id="deliveries-heading">Deliveries</h2>
        <div className="filters">
          <div className="field">
            <label htmlFor={filterId}>Status</label>
            <select
              id={filterId}
              value={status ?? ''}
              onChange={(e) => {
                pager.reset();
                setStatus((e.target.value || undefined) as DeliveryStatus | undefined);
              }}
            >
              <option value="">All</option>
              {DELIVERY_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </div>
        </div>
      </div>
      <WriteError error={redeliver.error} />
      {redeliver.isSuccess && (
        <p className="notice ok" role="status">
          Delivery queued again; its row updates when the attempt ends.
        </p>
      )}
      <QueryView
        query={deliveries}
        what="the deliveries"
        pending={<TableSkeleton columns={7} rows={5} label="deliveries" />}
      >
        {(data) =>
          data.deliveries.length === 0 ? (
            <EmptyState title={status ? `No ${status} deliveries` : 'No deliveries yet'}>
              <p>
                {status
                  ? 'Pick another status, or All.'
                  : canWrite
                    ? 'Send a test event to check that your receiver answers, or wait for the next signal.'
                    : 'Deliveries appear here with the next signal.'}
              </p>
            </EmptyState>
          ) : (
            <>
              <DeliveriesTable
                deliveries={data.deliveries}
                canRedeliver={canWrite}
                redelivering={redeliver.isPending ? redeliver.variables : undefined}
                onRedeliver={(id) => redeliver.mutate(id)}
              />
              <Pager pager={pager} nextBefore={data.next_before} label="Deliveries" />
              <p className="hint muted">
                <Link to={`${LIST}/deliveries?endpoint_id=${encodeURIComponent(endpointId)}`}>
                  Search this endpoint's deliveries
                </Link>{' '}
                by signal, status and date in the delivery log.
              </p>
            </>
          )
        }
      </QueryView>
    </section>
  );
}

function EndpointDetail() {
  const { endpointId = '' } = useParams();
  const endpoint = useEndpoint(endpointId);
  // Read with the endpoint, so that a replay's progress does not push the page down as it arrives.
  const replays = useReplays(endpointId);
  const canWrite = useCan('manageWebhooks');
  const [secret, dismissSecret] = useSecretOnce(endpointId);
  const update = useUpdateEndpoint(endpointId);
  const remove = useDeleteEndpoint(endpointId);
  const test = useSendTestEvent(endpointId);
  const navigate = useNavigate();

  if (endpoint.isPending || replays.isPending)
    return (
      <Page title="Endpoint" back={BACK}>
        <BlockSkeleton height="12rem" label="the endpoint" />
      </Page>
    );
  if (endpoint.isError)
    return (
      <Page title="Endpoint" back={BACK}>
        <ErrorNotice error={endpoint.error} what="this endpoint" onRetry={() => endpoint.refetch()} />
      </Page>
    );
  const e = endpoint.data;
  const actions = canWrite && (
    <>
      <button type="button" className="button primary" disabled={test.isPending} onClick={() => test.mutate()}>
        Send test event
      </button>
      <Link className="button" to="edit">
        Edit
      </Link>
      <button
        type="button"
        className="button"
        disabled={update.isPending}
        onClick={() => update.mutate({ enabled: !e.enabled })}
      >
        {e.enabled ? 'Disable' : 'Enable'}
      </button>
      <ConfirmAction
        label="Delete"
        question={`Delete “${e.name}”? Guard stops sending to it at once, and its delivery history is deleted with it.`}
        pending={remove.isPending}
        onConfirm={() => remove.mutate(undefined, { onSuccess: () => navigate(LIST, { replace: true }) })}
      />
    </>
  );
  const headerNames = Object.keys(e.headers);
  return (
    <Page title={e.name} back={BACK} actions={actions}>
      {secret && <SecretReveal secret={secret} onDone={dismissSecret} />}
      <WriteError error={test.error ?? update.error ?? remove.error} />
      {test.isSuccess && (
        <p className="notice ok" role="status">
          Test event sent. Its delivery is at the top of the list below.
        </p>
      )}
      {!canWrite && (
        <div className="notice info">
          <p>You can look at this endpoint and its deliveries. Only admins can change it.</p>
        </div>
      )}
      <CertificateNotice endpoint={e} />
      <section className="card" aria-labelledby="endpoint-facts">
        <h2 id="endpoint-facts">Endpoint</h2>
        <dl className="details">
          <dt>URL</dt>
          <dd className="mono">{e.url}</dd>
          <dt>State</dt>
          <dd>
            <span className={`badge ${e.enabled ? 'ok' : 'neutral'}`}>{e.enabled ? 'enabled' : 'disabled'}</span>
            {e.disabled_reason && <span className="hint"> {e.disabled_reason}</span>}
          </dd>
          <dt>Events</dt>
          <dd className="mono">{e.event_types.join(', ')}</dd>
          <dt>Signal filter</dt>
          <dd>
            {e.min_severity > 1 ? `severity ${e.min_severity} and above` : 'every severity'}
            {', '}
            {e.signal_types ? <span className="mono">{e.signal_types.join(', ')}</span> : 'every type'}
          </dd>
          <dt>Rate limit</dt>
          <dd>{e.rate_limit === null ? 'none' : `${plural(e.rate_limit, 'delivery', 'deliveries')} per second`}</dd>
          <dt>Custom headers</dt>
          <dd>{headerNames.length > 0 ? <span className="mono">{headerNames.join(', ')}</span> : 'none'}</dd>
          <TransportFacts endpoint={e} />
          <dt>Created</dt>
          <dd>
            <RelativeTime at={e.created_at} />
          </dd>
        </dl>
      </section>
      <EndpointHealth endpoint={e} />
      <Deliveries endpointId={endpointId} canWrite={canWrite} />
      <SecretRotation endpoint={e} canWrite={canWrite} />
      <ReplayPanel endpointId={endpointId} enabled={e.enabled} canWrite={canWrite} />
      <VerifySample />
    </Page>
  );
}

export default gated('readWebhooks', EndpointDetail);
