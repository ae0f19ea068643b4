// Which of a tenant's events a listen stream carries (`?events=`), in the words endpoints
// subscribe with (@guard/contract EVENT_TYPES): `signal_created` (signals), `test` (test
// events: an endpoint's "Send test event", a rotation's proof, `guard trigger`),
// `endpoint.failing` and `endpoint.disabled` (operational events). A stream that names none
// carries them all: a developer's listener wants to see everything the tenant makes.
//
// A triggered event (`guard trigger signal_created`) is a test event that announces itself as
// signal_created (Guard-Event, event_type): it matches `signal_created` as well as `test`, so
// that `guard listen --events signal_created` sees what `guard trigger signal_created` made.

import { EVENT_TYPES, type EventType } from '@guard/contract/endpoint-rules';
import { badRequest } from '../../kernel/errors.ts';
import { eventTypeOf } from '../subscriptions.ts';

/** The server_id of the rows `POST /v1/webhooks/listen/trigger` writes. */
export const TRIGGER_SERVER_ID = 'guard-listen';

export type EventFilter = ReadonlySet<EventType>;

/** `a,b,c` → the event types named (deduplicated, in EVENT_TYPES order); absent or empty: all. */
export function parseEventFilter(param: string | undefined): EventType[] {
  if (param === undefined || param.trim() === '') return [...EVENT_TYPES];
  const named = param.split(',').map((t) => t.trim());
  const unknown = named.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0)
    throw badRequest(
      `unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.map((t) => JSON.stringify(t)).join(', ')}; events takes a comma-separated list of ${EVENT_TYPES.join(', ')}`,
      'unknown_event_type',
    );
  return EVENT_TYPES.filter((t) => named.includes(t));
}

/** The filter words a stored row answers to. */
export function listenTypesOf(row: { event_type: string; is_test: number; server_id: string }): EventType[] {
  const type = eventTypeOf(row);
  if (type === 'test' && row.server_id === TRIGGER_SERVER_ID) return ['signal_created', 'test'];
  return [type];
}

export function wants(filter: EventFilter, row: { event_type: string; is_test: number; server_id: string }): boolean {
  return listenTypesOf(row).some((t) => filter.has(t));
}
