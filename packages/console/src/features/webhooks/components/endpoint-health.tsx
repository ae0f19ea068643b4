// An endpoint's health: its success rate over the last day, its failure streak and, while it
// fails, how long until Guard disables it (the server's numbers; this only words them).

import { RelativeTime } from '../../../components/relative-time.tsx';
import { plural } from '../../../lib/plural.ts';
import { type Endpoint, HEALTH_REFRESH_MS } from '../api/endpoints.ts';

export function successRateText(h: Endpoint['health']): string {
  if (h.success_rate === null) return `no attempts in the last ${h.window_hours} h`;
  const pct = h.success_rate * 100;
  const shown = pct > 99 && pct < 100 ? pct.toFixed(1) : pct >= 99.95 ? '100' : pct.toFixed(0);
  return `${shown} % of ${plural(h.attempts, 'attempt')} in the last ${h.window_hours} h`;
}

export function EndpointHealth({ endpoint: e }: { endpoint: Endpoint }) {
  const h = e.health;
  const failing = h.failing_since !== null && e.enabled;
  return (
    <section className="card" aria-labelledby="endpoint-health">
      <h2 id="endpoint-health">Health</h2>
      {failing && (
        <div className="notice warn" role="status">
          <p>
            Every attempt has failed since <RelativeTime at={h.failing_since} /> ({plural(h.failure_streak, 'attempt')}{' '}
            in a row). Guard disables this endpoint <RelativeTime at={h.disable_at} /> unless a delivery succeeds
            before.
          </p>
        </div>
      )}
      <dl className="details">
        <dt>Success rate</dt>
        <dd>{successRateText(h)}</dd>
        <dt>Failure streak</dt>
        <dd>{h.failure_streak === 0 ? 'none' : `${plural(h.failure_streak, 'failed attempt')} in a row`}</dd>
        <dt>Auto-disable</dt>
        <dd>
          {!e.enabled ? (
            'disabled'
          ) : failing ? (
            <>
              <RelativeTime at={h.disable_at} /> unless a delivery succeeds
            </>
          ) : (
            'not due: the endpoint is not failing'
          )}
        </dd>
      </dl>
      <p className="hint muted">
        Refreshed every {HEALTH_REFRESH_MS / 1000} seconds. A test event that fails counts in the success rate, never in
        the failure streak.
      </p>
    </section>
  );
}
