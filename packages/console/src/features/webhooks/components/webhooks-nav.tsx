// The pages of Settings > Integrations > Webhooks, as tabs under each one's title (Svix's and
// Stripe's dashboards keep endpoints, their log and the event types side by side).

import { NavLink } from 'react-router';

export const WEBHOOKS_PATH = '/settings/integrations/webhooks';

const PAGES = [
  { to: WEBHOOKS_PATH, label: 'Endpoints', end: true },
  { to: `${WEBHOOKS_PATH}/deliveries`, label: 'Deliveries', end: false },
  { to: `${WEBHOOKS_PATH}/events`, label: 'Event catalog', end: false },
  { to: `${WEBHOOKS_PATH}/local-development`, label: 'Local development', end: false },
] as const;

export function WebhooksNav() {
  return (
    <nav className="tabs" aria-label="Webhook pages">
      <ul>
        {PAGES.map((p) => (
          <li key={p.to}>
            <NavLink to={p.to} end={p.end}>
              {p.label}
            </NavLink>
          </li>
        ))}
      </ul>
    </nav>
  );
}
