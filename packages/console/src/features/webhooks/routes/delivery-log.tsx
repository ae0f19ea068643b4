// Webhooks > Deliveries: every endpoint's deliveries in one log, searched by signal, endpoint,
// status and time (Svix's message log, Stripe's event deliveries). Filters live in the URL.

import { Page } from '../../../components/page.tsx';
import { Pager } from '../../../components/pager.tsx';
import { EmptyState, QueryView, TableSkeleton } from '../../../components/query-states.tsx';
import { useKeysetPager } from '../../../lib/keyset-pager.ts';
import { useUrlFilters } from '../../../lib/search-params.ts';
import { gated } from '../../auth/index.ts';
import { type DeliveryLogFilters as Filters, useDeliveryLog } from '../api/deliveries.ts';
import { useEndpoints } from '../api/endpoints.ts';
import { DeliveryLogFilters } from '../components/delivery-log-filters.tsx';
import { DeliveryLogTable } from '../components/delivery-log-table.tsx';
import { WebhooksNav } from '../components/webhooks-nav.tsx';

function DeliveryLog() {
  const [filters, setFilters] = useUrlFilters<Filters>();
  const pager = useKeysetPager();
  const log = useDeliveryLog(filters, pager.before);
  const endpoints = useEndpoints().data?.endpoints ?? [];
  const filtered = Object.values(filters).some((v) => v !== undefined);
  return (
    <Page
      title="Webhook deliveries"
      description="Every delivery to your endpoints, newest first. Open one for its attempts: the request as sent and the response."
    >
      <WebhooksNav />
      <DeliveryLogFilters
        key={JSON.stringify(filters)}
        value={filters}
        endpoints={endpoints}
        onChange={(f) => {
          pager.reset();
          setFilters(f);
        }}
      />
      <QueryView query={log} what="the deliveries" pending={<TableSkeleton columns={9} rows={8} label="deliveries" />}>
        {(data) =>
          data.deliveries.length === 0 ? (
            <EmptyState title={filtered ? 'No delivery matches this search' : 'No deliveries yet'}>
              <p>
                {filtered
                  ? 'Widen the search: clear the signal, pick any endpoint or status, or extend the dates.'
                  : 'Deliveries appear here as soon as a signal or a test event is sent to an endpoint.'}
              </p>
            </EmptyState>
          ) : (
            <>
              <DeliveryLogTable deliveries={data.deliveries} />
              <Pager pager={pager} nextBefore={data.next_before} label="Deliveries" />
            </>
          )
        }
      </QueryView>
    </Page>
  );
}

export default gated('readWebhooks', DeliveryLog);
