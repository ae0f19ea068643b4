// The banner an admin sees on every page while an endpoint of the tenant is failing (with the
// time until Guard disables it) or was disabled automatically: one line per endpoint, linking
// to it.

import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { useEndpoints } from '../api/endpoints.ts';

const BANNER_REFRESH_MS = 60_000;
const AUTO_DISABLED = /^disabled automatically/;

export function FailingEndpointsBanner() {
  const endpoints = useEndpoints({ refetchInterval: BANNER_REFRESH_MS });
  const list = endpoints.data?.endpoints ?? [];
  const failing = list.filter((e) => e.enabled && e.failing_since !== null);
  const disabled = list.filter((e) => !e.enabled && AUTO_DISABLED.test(e.disabled_reason ?? ''));
  if (failing.length === 0 && disabled.length === 0) return null;
  return (
    <section className="notice warn banner" aria-label="Webhook endpoints that need attention">
      {failing.map((e) => (
        <p key={e.id}>
          Webhook endpoint <Link to={`/settings/integrations/webhooks/${e.id}`}>{e.name}</Link> is failing: every
          attempt since <RelativeTime at={e.failing_since} /> has failed. Guard disables it{' '}
          <RelativeTime at={e.health.disable_at} /> unless a delivery succeeds.
        </p>
      ))}
      {disabled.map((e) => (
        <p key={e.id}>
          Webhook endpoint <Link to={`/settings/integrations/webhooks/${e.id}`}>{e.name}</Link> was disabled
          automatically after failing without a break. Fix the receiver, enable it and replay its failed deliveries.
        </p>
      ))}
    </section>
  );
}

/**
 * The page under the banner, shown once the endpoints' first answer is in (or failed): the
 * banner then never appears above content already drawn and pushes it down (a layout shift on
 * every page an admin opens directly while an endpoint fails).
 */
export function WithFailingEndpointsBanner({ children }: { children: ReactNode }) {
  const endpoints = useEndpoints({ refetchInterval: BANNER_REFRESH_MS });
  if (endpoints.isPending) return <div className="boot" aria-busy="true" />;
  return (
    <>
      <FailingEndpointsBanner />
      {children}
    </>
  );
}
