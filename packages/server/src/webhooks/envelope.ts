// The exact wire format of one delivery attempt (spec 2.6, 4.3; DESIGN §5 contract). The
// body is serialised once per attempt, with `timestamp` = the send time, and signed over
// those exact bytes with the SDK's own `sign`.

import { randomBytes } from 'node:crypto';
import { type GuardEvent, type SignalCreatedEvent, sign, signStandard } from '@guard/webhooks';
import type { SignalTable } from '../db/index.ts';
import { validTraceparent } from '../tracing/index.ts';
import { EVENT_AUDIT } from './audit-relay.ts';
import { endpointConsoleUrl } from './operational-events.ts';

export const WEBHOOK_USER_AGENT = 'Guard-Webhook/1.0';
export const EVENT_SIGNAL_CREATED = 'signal_created';

/**
 * A new endpoint secret: `whsec_` + standard base64 with padding of 32 random bytes, so every
 * Standard Webhooks library takes it as given (DESIGN §5). Secrets issued before in base64url
 * keep working: the SDK decodes either alphabet.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The envelope of one attempt. An operational event (operational-events.ts) carries the data
 * frozen in its row, linking to the endpoint it is about (an audit entry, audit-relay.ts: to the
 * audit log); a signal (or test event) its signal.
 */
export function buildEnvelope(signal: SignalTable, consoleBaseUrl: string, sentAt: Date): GuardEvent {
  if (signal.event_type !== EVENT_SIGNAL_CREATED && signal.event_data !== null) {
    const data = JSON.parse(signal.event_data) as { endpoint_id: string };
    return {
      event_type: signal.event_type,
      version: 'v1',
      timestamp: sentAt.toISOString(),
      tenant_id: signal.tenant_id,
      data,
      console_url:
        signal.event_type === EVENT_AUDIT
          ? `${consoleBaseUrl}/console/support/audit`
          : endpointConsoleUrl(consoleBaseUrl, data.endpoint_id),
    } as GuardEvent;
  }
  return {
    event_type: EVENT_SIGNAL_CREATED,
    version: 'v1',
    timestamp: sentAt.toISOString(),
    tenant_id: signal.tenant_id,
    data: {
      signal_id: signal.id,
      signal_type: signal.signal_type,
      severity: signal.severity as SignalCreatedEvent['data']['severity'],
      description: signal.description,
      server_id: signal.server_id,
      server_name: signal.server_name,
      identity_id: signal.identity_id,
      identity_name: signal.identity_name,
      environment: signal.environment,
      created_at: signal.created_at,
    },
    console_url: `${consoleBaseUrl}/console/signals/${encodeURIComponent(signal.id)}`,
  };
}

/**
 * Body and headers of one attempt. Custom headers go first: reserved names can't be overridden
 * (validated at write). `secrets` are the valid secrets, newest first: one outside a rotation,
 * so Guard-Signature is exactly one `sha256=<hex>`; during a rotation's grace period one entry
 * per secret, newest first, separated by ", " (DESIGN §5 contract — rotation). The Standard
 * Webhooks headers carry the same id, time and secrets (DESIGN §5 contract — Standard Webhooks).
 * `traceparent` (W3C trace context) is sent when given.
 */
export function buildAttempt(
  signal: SignalTable,
  delivery: { id: string },
  endpoint: { secrets: readonly string[]; headers: Record<string, string>; traceparent?: string | null },
  consoleBaseUrl: string,
  sentAt: Date,
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(buildEnvelope(signal, consoleBaseUrl, sentAt));
  const timestamp = String(Math.floor(sentAt.getTime() / 1000));
  const headers: Record<string, string> = {
    ...endpoint.headers,
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'guard-signature': signatureHeader(body, endpoint.secrets),
    'guard-event': signal.event_type,
    'guard-delivery': delivery.id,
    'guard-timestamp': timestamp,
    'webhook-id': delivery.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': standardSignatureHeader(delivery.id, timestamp, body, endpoint.secrets),
  };
  // Checked again as sent (a database may come from an import): a malformed one is left out.
  const traceparent = validTraceparent(endpoint.traceparent ?? undefined);
  if (traceparent) {
    // Ours replaces a custom header of the trace context in any letter case (never two).
    for (const name of Object.keys(headers)) if (/^trace(parent|state)$/i.test(name)) delete headers[name];
    headers.traceparent = traceparent;
  }
  return { body, headers };
}

/** webhook-signature: one `v1,<base64>` entry per secret, newest first, separated by a space. */
export function standardSignatureHeader(
  id: string,
  timestamp: string,
  body: string,
  secrets: readonly string[],
): string {
  return secrets.map((secret) => signStandard(id, timestamp, body, secret)).join(' ');
}

/** Guard-Signature over `body`: one entry per secret, in the order given (newest first). */
export function signatureHeader(body: string, secrets: readonly string[]): string {
  if (secrets.length === 0) throw new Error('an attempt is signed with at least one secret');
  return secrets.map((secret) => sign(body, secret)).join(', ');
}
