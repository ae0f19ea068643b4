// @guard/webhooks for Node.js: sign, verify and parse Guard webhooks.
//
//   Guard-Signature: sha256=<lowercase hex HMAC-SHA256(key = secret's UTF-8 bytes, message = raw body)>
//
// The server's signer imports `sign` from here, so sender and receiver share one definition.
// For edge runtimes (WebCrypto only), import from '@guard/webhooks/web'.

import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  bodyBytes,
  type ConstructEventOptions,
  type HeaderSource,
  headerValue,
  parseEnvelope,
  parseSignatureHeader,
  type RawBody,
  SIGNATURE_HEADER,
  SIGNATURE_PREFIX,
  type SignalCreatedEvent,
  WebhookVerificationError,
} from './envelope.ts';

export * from './envelope.ts';

/** `sha256=<hex>` for a body under a secret: the Guard-Signature header value. */
export function sign(rawBody: RawBody, secret: string): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(bodyBytes(rawBody)).digest('hex');
}

/**
 * Verifies a Guard-Signature header against the raw body in constant time. `secret` may be a
 * list (during a secret rotation any one may match). Throws WebhookVerificationError.
 */
export function verifySignature(
  rawBody: RawBody,
  header: string | undefined,
  secret: string | readonly string[],
): void {
  const got = parseSignatureHeader(header);
  const bytes = bodyBytes(rawBody);
  let ok = false;
  for (const s of typeof secret === 'string' ? [secret] : secret) {
    const want = createHmac('sha256', s).update(bytes).digest();
    ok = timingSafeEqual(want, got) || ok; // no early exit: every secret is tried
  }
  if (!ok)
    throw new WebhookVerificationError('signature_mismatch', 'the Guard-Signature does not match the body and secret');
}

/**
 * Verifies and parses one delivery: signature over the raw body, then the V1 envelope, then
 * its signed `timestamp` within `toleranceSeconds` (default 300) of now. Deduplicate with the
 * Guard-Delivery header: it is the same for every retry of one delivery.
 */
export function constructEvent(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): SignalCreatedEvent {
  verifySignature(rawBody, headerValue(headers, SIGNATURE_HEADER), secret);
  return parseEnvelope(bodyBytes(rawBody), options);
}
