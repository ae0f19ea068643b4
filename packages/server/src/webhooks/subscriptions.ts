// What each endpoint receives (issue 14, item 4): the event types it subscribes to and, for
// signals, a minimum severity and a list of signal types. Stored on the endpoint as a bit mask
// (`event_mask`), `min_severity` and `signal_types` (JSON array or null), so that the outbox's
// enqueue selects the matching endpoints in the same SQL that finds them (both engines), with
// no per-signal work in JavaScript. The same rule is written here once, as a pure function,
// for the tests and the docs.
//
// Operational events are opt-in: an endpoint created without `event_types` receives what
// every endpoint received before subscriptions existed (signal_created and test events), as
// DESIGN §5 fixes Guard-Event to signal_created for such receivers, and a receiver on an
// earlier SDK refuses any other event type (unsupported_event), which would count as a
// failure against it.

import { ENDPOINT_DEFAULTS, EVENT_TYPES, type EventType } from '@guard/contract/endpoint-rules';

export { EVENT_TYPES, type EventType };

/** One bit per event type, as stored in webhook_endpoints.event_mask. */
export const EVENT_BITS: Record<EventType, number> = {
  signal_created: 1,
  test: 2,
  'endpoint.failing': 4,
  'endpoint.disabled': 8,
  'endpoint.certificate_expiring': 16,
  'audit.event': 32,
};

/** The event types of an endpoint that names none: what every endpoint received before. */
export const DEFAULT_EVENT_TYPES: readonly EventType[] = ENDPOINT_DEFAULTS.event_types;
export const DEFAULT_EVENT_MASK = maskOf(DEFAULT_EVENT_TYPES);

/** The subscription columns of a new endpoint that chose nothing, and its fresh health. */
export const NEW_ENDPOINT_DEFAULTS = {
  event_mask: DEFAULT_EVENT_MASK,
  min_severity: ENDPOINT_DEFAULTS.min_severity,
  signal_types: ENDPOINT_DEFAULTS.signal_types,
  rate_limit: ENDPOINT_DEFAULTS.rate_limit,
  failure_streak: 0,
  failing_alerted: 0,
} as const;

export function maskOf(types: readonly EventType[]): number {
  let mask = 0;
  for (const t of types) mask |= EVENT_BITS[t];
  return mask;
}

export function typesOf(mask: number): EventType[] {
  return EVENT_TYPES.filter((t) => (mask & EVENT_BITS[t]) !== 0);
}

/** The event type a stored row announces: a test event is a synthetic signal_created row. */
export function eventTypeOf(row: { event_type: string; is_test: number }): EventType {
  if (row.event_type === 'signal_created') return row.is_test === 1 ? 'test' : 'signal_created';
  return row.event_type as EventType;
}

/** The bit the enqueue matches against event_mask for a row. */
export function eventBitOf(row: { event_type: string; is_test: number }): number {
  return EVENT_BITS[eventTypeOf(row)] ?? 0;
}

export interface Subscription {
  event_mask: number;
  min_severity: number;
  /** JSON array, or null for every type. */
  signal_types: string | null;
}

/**
 * Whether an endpoint receives a row fanned out to its tenant (the enqueue's SQL says the
 * same). Signal filters apply to signals only; test events go to one endpoint by name and are
 * checked where they are sent.
 */
export function subscribes(
  s: Subscription,
  row: { event_type: string; is_test: number; severity: number; signal_type: string },
): boolean {
  if ((s.event_mask & eventBitOf(row)) === 0) return false;
  if (row.event_type !== 'signal_created') return true;
  if (row.severity < s.min_severity) return false;
  return s.signal_types === null || (JSON.parse(s.signal_types) as string[]).includes(row.signal_type);
}
