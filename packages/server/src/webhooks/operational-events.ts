// Operational events (issue 14, item 3): `endpoint.failing` when an endpoint's failing streak
// crosses 50 %, 75 % and 90 % of the disable window (once each per streak), and
// `endpoint.disabled` when the streak disables it. They are delivered to the tenant's OTHER
// enabled endpoints that subscribe to them, through the same outbox, queue and worker as
// signals, signed like every delivery, with the same V1 envelope fields (event_type, version,
// timestamp, tenant_id, data, console_url). Each is stored as a synthetic row of `signals`
// (is_test = 1, so no signal list shows it; event_type says what it is) whose `event_data`
// freezes the event's data when it happened; each attempt re-stamps only `timestamp`. The
// delivery queue writes the row, its deliveries and an audit entry in the transaction that
// records the outcome that caused it, so an alert is written once, with the streak's mark.

import type {
  EndpointCertificateExpiringEvent,
  EndpointDisabledEvent,
  EndpointEventData,
  EndpointFailingEvent,
} from '@guard/webhooks';
import type { SignalTable } from '../db/index.ts';
import { timeOrderedId } from '../kernel/ids.ts';
import type { FailingAlert } from './outcome-policy.ts';

export const EVENT_ENDPOINT_FAILING = 'endpoint.failing';
export const EVENT_ENDPOINT_DISABLED = 'endpoint.disabled';
export const EVENT_CERTIFICATE_EXPIRING = 'endpoint.certificate_expiring';

/** The endpoint an operational event is about, as the recording transaction read it. */
export interface EventEndpoint {
  id: string;
  tenant_id: string;
  name: string;
  url: string;
  failing_since: string | null;
  failure_streak: number;
}

/** The audit log's actor for what the delivery machinery does by itself. */
export const SYSTEM_ACTOR = { id: 'guard', role: 'system' } as const;

function eventRow(
  e: EventEndpoint,
  type: string,
  severity: number,
  description: string,
  at: string,
  data: object,
): SignalTable {
  return {
    id: (data as { event_id: string }).event_id,
    tenant_id: e.tenant_id,
    agent_id: null,
    server_id: 'guard',
    server_name: 'guard-server',
    signal_type: type,
    severity,
    description,
    identity_id: SYSTEM_ACTOR.id,
    identity_name: 'guard-server',
    environment: 'guard',
    created_at: at,
    received_at: at,
    is_test: 1,
    event_type: type,
    event_data: JSON.stringify(data),
  };
}

function commonData(e: EventEndpoint, at: string, lastError: string): EndpointEventData {
  return {
    event_id: timeOrderedId('evt', Date.parse(at)),
    endpoint_id: e.id,
    name: e.name,
    // Its origin only: the event goes to the tenant's other receivers (third parties), and a
    // path or query may hold a credential (chat webhooks put their token there).
    url: new URL(e.url).origin,
    failing_since: e.failing_since ?? at,
    failure_streak: e.failure_streak,
    last_error: lastError,
  };
}

export function failingEvent(e: EventEndpoint, alert: FailingAlert, lastError: string, at: string): SignalTable {
  const data: EndpointFailingEvent['data'] = {
    ...commonData({ ...e, failing_since: alert.failingSince }, at, lastError),
    percent: alert.percent as 50 | 75 | 90,
    disable_at: alert.disableAt,
    occurred_at: at,
  };
  const description = `Webhook endpoint "${e.name}" has failed for ${alert.percent} % of its disable window; it will be disabled at ${alert.disableAt} unless a delivery succeeds`;
  return eventRow(e, EVENT_ENDPOINT_FAILING, 3, description, at, data);
}

export function disabledEvent(e: EventEndpoint, reason: string, lastError: string, at: string): SignalTable {
  const data: EndpointDisabledEvent['data'] = {
    ...commonData(e, at, lastError),
    disabled_at: at,
    reason,
  };
  return eventRow(e, EVENT_ENDPOINT_DISABLED, 4, `Webhook endpoint "${e.name}" was disabled: ${reason}`, at, data);
}

/**
 * An endpoint's client certificate expires within `thresholdDays` (certificate-expiry.ts).
 * Unlike the failing events it goes to every subscribed endpoint, the one it is about too.
 */
export function certificateExpiringEvent(
  e: Pick<EventEndpoint, 'id' | 'tenant_id' | 'name' | 'url'>,
  certificate: { subject: string; notAfter: string },
  thresholdDays: 30 | 7 | 1,
  at: string,
): SignalTable {
  const daysLeft = Math.floor((Date.parse(certificate.notAfter) - Date.parse(at)) / 86_400_000);
  const data: EndpointCertificateExpiringEvent['data'] = {
    event_id: timeOrderedId('evt', Date.parse(at)),
    endpoint_id: e.id,
    name: e.name,
    url: new URL(e.url).origin,
    certificate_subject: certificate.subject,
    not_after: certificate.notAfter,
    days_left: daysLeft,
    threshold_days: thresholdDays,
  };
  const when = daysLeft < 0 ? 'has expired' : `expires in ${daysLeft} ${daysLeft === 1 ? 'day' : 'days'}`;
  const description = `The client certificate of webhook endpoint "${e.name}" (${certificate.subject}) ${when}, at ${certificate.notAfter}`;
  return eventRow(e as EventEndpoint, EVENT_CERTIFICATE_EXPIRING, daysLeft < 7 ? 4 : 3, description, at, data);
}

/** The console page of an endpoint: operational events link there. */
export function endpointConsoleUrl(consoleBaseUrl: string, endpointId: string): string {
  return `${consoleBaseUrl}/console/settings/integrations/webhooks/${encodeURIComponent(endpointId)}`;
}

/** What a batch of outcomes has to announce about one endpoint (at most one of each per batch). */
export interface Announcement {
  endpointId: string;
  /** The newest threshold crossed in the batch, if any. */
  alert: FailingAlert | undefined;
  /** Set when the batch disabled the endpoint. */
  disabled: { reason: string; at: string } | undefined;
  lastError: string;
  at: string;
}

/** A row of audit_log written by the delivery machinery itself. */
export interface SystemAuditRow {
  id: string;
  at: string;
  actor_id: string;
  actor_role: string;
  tenant_id: string;
  action: string;
  target: string;
}

/**
 * The event rows (with their fan-out: the tenant's other endpoints subscribed to them) and the
 * audit rows an announcement writes. The disabling, when there is one, says more than a
 * threshold crossed in the same batch, and is the only event then.
 */
export function announce(e: EventEndpoint, a: Announcement): { events: SignalTable[]; audit: SystemAuditRow[] } {
  const event = a.disabled
    ? disabledEvent(e, a.disabled.reason, a.lastError, a.disabled.at)
    : a.alert
      ? failingEvent(e, a.alert, a.lastError, a.alert.at)
      : undefined;
  if (!event) return { events: [], audit: [] };
  return {
    events: [event],
    audit: [
      {
        id: `au_${event.id}`,
        at: event.created_at,
        actor_id: SYSTEM_ACTOR.id,
        actor_role: SYSTEM_ACTOR.role,
        tenant_id: e.tenant_id,
        action: a.disabled ? 'webhook_endpoint.disabled' : 'webhook_endpoint.failing',
        target: e.id,
      },
    ],
  };
}

/** Collects a batch's announcements per endpoint, as the policy decides each outcome. */
export function noteAnnouncement(
  into: Map<string, Announcement>,
  endpointId: string,
  decision: { alert: FailingAlert | undefined; disable: { reason: string; at: string } | undefined; lastError: string },
  at: string,
): void {
  if (!decision.alert && !decision.disable) return;
  const prev = into.get(endpointId);
  into.set(endpointId, {
    endpointId,
    alert: decision.alert ?? prev?.alert,
    disabled: decision.disable ?? prev?.disabled,
    lastError: decision.lastError,
    at,
  });
}
