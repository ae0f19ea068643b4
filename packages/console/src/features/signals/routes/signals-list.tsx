import { Page } from '../../../components/page.tsx';
import { Pager } from '../../../components/pager.tsx';
import { EmptyState, QueryView, TableSkeleton } from '../../../components/query-states.tsx';
import { useKeysetPager } from '../../../lib/keyset-pager.ts';
import { useUrlFilters } from '../../../lib/search-params.ts';
import { type SignalFilters as Filters, PAGE_SIZE, useSignals } from '../api/signals.ts';
import { SignalFilters } from '../components/signal-filters.tsx';
import { SignalTable } from '../components/signal-table.tsx';

const NUMERIC = ['severity_min'] as const;

export function SignalsListPage() {
  const [filters, setFilters] = useUrlFilters<Filters>(NUMERIC);
  const pager = useKeysetPager();
  const signals = useSignals(filters, pager.before);
  const filtered = Object.values(filters).some((v) => v !== undefined);
  return (
    <Page title="Signals" description="Security signals your agents reported, newest first.">
      <SignalFilters
        key={JSON.stringify(filters)}
        value={filters}
        onChange={(f) => {
          pager.reset();
          setFilters(f);
        }}
      />
      <QueryView query={signals} what="the signals" pending={<TableSkeleton columns={5} rows={8} label="signals" />}>
        {(data) =>
          data.signals.length === 0 ? (
            <EmptyState title={filtered ? 'No signal matches these filters' : 'No signals yet'}>
              <p>
                {filtered
                  ? 'Widen the filters: lower the minimum severity, clear the type or extend the dates.'
                  : 'Signals appear here as soon as an enrolled agent reports one. Enrol a server on the Servers page.'}
              </p>
            </EmptyState>
          ) : (
            <>
              <SignalTable signals={data.signals} />
              <Pager pager={pager} nextBefore={data.next_before} label="Signals" />
              {data.signals.length === PAGE_SIZE && !data.next_before && <p className="hint">That is all.</p>}
            </>
          )
        }
      </QueryView>
    </Page>
  );
}

export default SignalsListPage;
