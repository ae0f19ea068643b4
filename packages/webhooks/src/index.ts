// @guard/webhooks for Node.js: sign, verify and parse Guard webhooks.
//
//   Guard-Signature: sha256=<lowercase hex HMAC-SHA256(key = secret's UTF-8 bytes, message = raw body)>
//
// During a secret rotation the header is a list, newest first: `sha256=<new>, sha256=<old>`.
// The server's signer imports `sign` from here, so sender and receiver share one definition.
// For edge runtimes (WebCrypto only), import from '@guard/webhooks/web'.

import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  bodyBytes,
  type ConstructEventOptions,
  checkSecrets,
  type GuardEvent,
  type HeaderSource,
  headerValue,
  parseEnvelope,
  parseSignatureHeader,
  type RawBody,
  replayWindow,
  SIGNATURE_HEADER,
  SIGNATURE_PREFIX,
  type SignalCreatedEvent,
  WebhookVerificationError,
} from './envelope.ts';

// The envelope's types, the errors and the header names: the same public list for both entries.
export * from './public-api.ts';

/** `sha256=<hex>` for a body under a secret: the Guard-Signature header value. */
export function sign(rawBody: RawBody, secret: string): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(bodyBytes(rawBody)).digest('hex');
}

function verifyChecked(rawBody: RawBody, header: string | undefined, secrets: readonly string[]): void {
  const got = parseSignatureHeader(header);
  const bytes = bodyBytes(rawBody);
  let ok = false;
  for (const s of secrets) {
    const want = createHmac('sha256', s).update(bytes).digest();
    for (const entry of got) ok = timingSafeEqual(want, entry) || ok; // no early exit: every pair is compared
  }
  if (!ok)
    throw new WebhookVerificationError('signature_mismatch', 'the Guard-Signature does not match the body and secret');
}

/**
 * Verifies a Guard-Signature header against the raw body in constant time. The header may be a
 * rotation list (any entry may match); `secret` may be a list too (any one may match). Throws
 * WebhookConfigurationError for a bad secret, WebhookVerificationError for a bad request.
 */
export function verifySignature(
  rawBody: RawBody,
  header: string | undefined,
  secret: string | readonly string[],
): void {
  verifyChecked(rawBody, header, checkSecrets(secret));
}

/**
 * Verifies and parses one delivery: signature over the raw body, then the V1 envelope, then
 * its signed `timestamp` within `toleranceSeconds` (default 300) of now. The secret and the
 * options are checked first (WebhookConfigurationError). To deduplicate, use the signed
 * `data.signal_id` (with `event_type`): the Guard-Delivery header is outside the signature.
 */
export function constructEvent(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): SignalCreatedEvent {
  const secrets = checkSecrets(secret);
  const window = replayWindow(options);
  verifyChecked(rawBody, headerValue(headers, SIGNATURE_HEADER), secrets);
  return parseEnvelope(bodyBytes(rawBody), window);
}

/**
 * constructEvent for an endpoint that subscribes to operational events too: the same checks,
 * and any event type Guard sends (`signal_created`, `endpoint.failing`, `endpoint.disabled`);
 * switch on `event.event_type`. Deduplicate on `data.signal_id` or `data.event_id`.
 */
export function constructGuardEvent(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): GuardEvent {
  const secrets = checkSecrets(secret);
  const window = replayWindow(options);
  verifyChecked(rawBody, headerValue(headers, SIGNATURE_HEADER), secrets);
  return parseEnvelope(bodyBytes(rawBody), window, true);
}
