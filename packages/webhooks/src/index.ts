// @guard/webhooks for Node.js: sign, verify and parse Guard webhooks.
//
//   Guard-Signature: sha256=<lowercase hex HMAC-SHA256(key = secret's UTF-8 bytes, message = raw body)>
//
// During a secret rotation the header is a list, newest first: `sha256=<new>, sha256=<old>`.
// Every delivery also carries the Standard Webhooks headers (webhook-id, webhook-timestamp,
// webhook-signature: `v1,<base64 HMAC-SHA256(base64-decoded secret, "<id>.<ts>.<body>")>`),
// signed with the same secret; constructEvent takes a request signed either way.
// The server's signer imports `sign` from here, so sender and receiver share one definition.
// For edge runtimes (WebCrypto only), import from '@guard/webhooks/web'.

import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import {
  bodyBytes,
  type ConstructEventOptions,
  checkSecrets,
  type GuardEvent,
  type HeaderSource,
  headerValue,
  parseEnvelope,
  parseSignatureHeader,
  parseStandardHeaders,
  type RawBody,
  type ReplayWindow,
  replayWindow,
  SIGNATURE_HEADER,
  SIGNATURE_PREFIX,
  type SignalCreatedEvent,
  STANDARD_SIGNATURE_PREFIX,
  standardKey,
  WEBHOOK_SIGNATURE_HEADER,
  WebhookVerificationError,
} from './envelope.ts';

// The envelope's types, the errors and the header names: the same public list for both entries.
export * from './public-api.ts';

/** `sha256=<hex>` for a body under a secret: the Guard-Signature header value. */
export function sign(rawBody: RawBody, secret: string): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(bodyBytes(rawBody)).digest('hex');
}

/**
 * One webhook-signature entry, `v1,<base64>`, for a delivery with this id and timestamp (Unix
 * seconds) under a secret: the Standard Webhooks scheme. Join the entries of several secrets
 * with a space.
 */
export function signStandard(id: string, timestamp: number | string, rawBody: RawBody, secret: string): string {
  const digest = createHmac('sha256', standardKeyObject(secret))
    .update(`${id}.${timestamp}.`)
    .update(bodyBytes(rawBody))
    .digest('base64');
  return STANDARD_SIGNATURE_PREFIX + digest;
}

/** Decoded keys as KeyObjects, by secret: HMAC with a KeyObject is about 5× faster than with raw bytes. */
const standardKeys = new Map<string, KeyObject>();
const STANDARD_KEYS_MAX = 256;

function standardKeyObject(secret: string): KeyObject {
  let key = standardKeys.get(secret);
  if (!key) {
    key = createSecretKey(standardKey(secret));
    if (standardKeys.size >= STANDARD_KEYS_MAX) standardKeys.clear();
    standardKeys.set(secret, key);
  }
  return key;
}

function verifyStandardChecked(
  rawBody: RawBody,
  headers: HeaderSource,
  secrets: readonly string[],
  window: ReplayWindow,
): void {
  const keys = secrets.map(standardKeyObject); // a secret that is not base64 is the receiver's mistake: checked first
  const { content, digests } = parseStandardHeaders(headers, bodyBytes(rawBody), window);
  let ok = false;
  for (const key of keys) {
    const want = createHmac('sha256', key).update(content).digest();
    for (const entry of digests) ok = timingSafeEqual(want, entry) || ok; // no early exit
  }
  if (!ok)
    throw new WebhookVerificationError(
      'signature_mismatch',
      'the webhook-signature does not match the id, timestamp, body and secret',
    );
}

/**
 * Verifies the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature)
 * against the raw body in constant time, with the webhook-timestamp within the replay window.
 * The header may list several entries (a rotation); `secret` may be a list too.
 */
export function verifyStandardSignature(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): void {
  const secrets = checkSecrets(secret);
  verifyStandardChecked(rawBody, headers, secrets, replayWindow(options));
}

/** Guard-Signature when the request has one, else the Standard Webhooks headers. */
function verifyEither(rawBody: RawBody, headers: HeaderSource, secrets: readonly string[], window: ReplayWindow): void {
  const guard = headerValue(headers, SIGNATURE_HEADER);
  if (guard === undefined && headerValue(headers, WEBHOOK_SIGNATURE_HEADER) !== undefined)
    verifyStandardChecked(rawBody, headers, secrets, window);
  else verifyChecked(rawBody, guard, secrets);
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
 * Verifies and parses one delivery: signature over the raw body (Guard-Signature, or when the
 * request has none the Standard Webhooks headers), then the V1 envelope, then
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
  verifyEither(rawBody, headers, secrets, window);
  return parseEnvelope(bodyBytes(rawBody), window);
}

/**
 * constructEvent for an endpoint that subscribes to operational events too: the same checks,
 * and any event type Guard sends (`signal_created`, `endpoint.failing`, `endpoint.disabled`,
 * `endpoint.certificate_expiring`, `audit.event`);
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
  verifyEither(rawBody, headers, secrets, window);
  return parseEnvelope(bodyBytes(rawBody), window, true);
}
