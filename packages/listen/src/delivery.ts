// What the CLI POSTs to the local URL: the event's body and the headers a real delivery
// carries (DESIGN §5 contracts — delivery request, Standard Webhooks), signed with the
// session's secret, so that the receiver under development runs the code it will run in
// production. Each forward is stamped with its own time: the envelope's `timestamp`,
// Guard-Timestamp and webhook-timestamp all say when it was sent, so a receiver's replay
// window judges it as it judges a delivery (whatever the server's clock says).

import { randomBytes } from 'node:crypto';
import { SECRET_PREFIX, sign, signStandard } from '@guard/webhooks';

export const USER_AGENT = 'Guard-Webhook/1.0';

/** A session secret: `whsec_` + standard base64 (with padding) of 32 random bytes, as endpoints get. */
export function newSessionSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** Why `secret` cannot sign (undefined: it can): `whsec_` and base64 of at least 16 bytes. */
export function secretProblem(secret: string): string | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return `a secret starts with ${SECRET_PREFIX}`;
  const text = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text) || text.replace(/=+$/, '').length % 4 === 1)
    return `a secret is ${SECRET_PREFIX} and base64`;
  if (Buffer.from(text, 'base64').length < 16) return 'a secret holds at least 16 bytes';
  return undefined;
}

/** The body as sent at `at`: the envelope with its `timestamp` set to then (data that is not an envelope goes as it came). */
export function stampedBody(data: string, at: Date): string {
  let envelope: unknown;
  try {
    envelope = JSON.parse(data);
  } catch {
    return data;
  }
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope) || !('timestamp' in envelope))
    return data;
  return JSON.stringify({ ...envelope, timestamp: at.toISOString() });
}

/** The headers of one forward (spec 4.3, DESIGN §5). */
export function deliveryHeaders(
  body: string,
  event: string,
  deliveryId: string,
  secret: string,
  at: Date,
): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'guard-signature': sign(body, secret),
    'guard-event': event,
    'guard-delivery': deliveryId,
    'guard-timestamp': String(timestamp),
    'webhook-id': deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandard(deliveryId, timestamp, body, secret),
  };
}
