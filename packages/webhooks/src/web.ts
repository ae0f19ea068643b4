// @guard/webhooks/web: the same checks on WebCrypto (crypto.subtle), for edge runtimes
// (Cloudflare Workers, Vercel Edge, Deno, Bun, browsers). Async, because subtle is.

import {
  bodyBytes,
  bytesEqual,
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
  standardSignedContent,
  toBase64,
  toHex,
  WEBHOOK_SIGNATURE_HEADER,
  WebhookVerificationError,
} from './envelope.ts';

// The envelope's types, the errors and the header names: the same public list for both entries.
export * from './public-api.ts';

async function hmac(secret: string | Uint8Array, bytes: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    'raw',
    (typeof secret === 'string' ? new TextEncoder().encode(secret) : secret) as Uint8Array<ArrayBuffer>,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, bytes as Uint8Array<ArrayBuffer>));
}

export async function signAsync(rawBody: RawBody, secret: string): Promise<string> {
  return SIGNATURE_PREFIX + toHex(await hmac(secret, bodyBytes(rawBody)));
}

/** signStandard of the Node entry, on WebCrypto: one `v1,<base64>` webhook-signature entry. */
export async function signStandardAsync(
  id: string,
  timestamp: number | string,
  rawBody: RawBody,
  secret: string,
): Promise<string> {
  const content = standardSignedContent(id, String(timestamp), bodyBytes(rawBody));
  return STANDARD_SIGNATURE_PREFIX + toBase64(await hmac(standardKey(secret), content));
}

async function verifyStandardChecked(
  rawBody: RawBody,
  headers: HeaderSource,
  secrets: readonly string[],
  window: ReplayWindow,
): Promise<void> {
  const keys = secrets.map(standardKey);
  const { content, digests } = parseStandardHeaders(headers, bodyBytes(rawBody), window);
  let ok = false;
  for (const key of keys) {
    const want = await hmac(key, content);
    for (const entry of digests) ok = bytesEqual(want, entry) || ok; // constant time, no early exit
  }
  if (!ok)
    throw new WebhookVerificationError(
      'signature_mismatch',
      'the webhook-signature does not match the id, timestamp, body and secret',
    );
}

/** verifyStandardSignature of the Node entry, on WebCrypto. */
export async function verifyStandardSignatureAsync(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): Promise<void> {
  const secrets = checkSecrets(secret);
  await verifyStandardChecked(rawBody, headers, secrets, replayWindow(options));
}

/** Guard-Signature when the request has one, else the Standard Webhooks headers. */
async function verifyEither(
  rawBody: RawBody,
  headers: HeaderSource,
  secrets: readonly string[],
  window: ReplayWindow,
): Promise<void> {
  const guard = headerValue(headers, SIGNATURE_HEADER);
  if (guard === undefined && headerValue(headers, WEBHOOK_SIGNATURE_HEADER) !== undefined)
    await verifyStandardChecked(rawBody, headers, secrets, window);
  else await verifyChecked(rawBody, guard, secrets);
}

async function verifyChecked(rawBody: RawBody, header: string | undefined, secrets: readonly string[]): Promise<void> {
  const got = parseSignatureHeader(header);
  const bytes = bodyBytes(rawBody);
  let ok = false;
  for (const s of secrets) {
    const want = await hmac(s, bytes); // one HMAC per secret, compared with every entry
    for (const entry of got) ok = bytesEqual(want, entry) || ok; // constant time, no early exit
  }
  if (!ok)
    throw new WebhookVerificationError('signature_mismatch', 'the Guard-Signature does not match the body and secret');
}

/** verifySignature of the Node entry, on WebCrypto. */
export async function verifySignatureAsync(
  rawBody: RawBody,
  header: string | undefined,
  secret: string | readonly string[],
): Promise<void> {
  await verifyChecked(rawBody, header, checkSecrets(secret));
}

/** constructEvent of the Node entry, on WebCrypto. */
export async function constructEventAsync(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): Promise<SignalCreatedEvent> {
  const secrets = checkSecrets(secret);
  const window = replayWindow(options);
  await verifyEither(rawBody, headers, secrets, window);
  return parseEnvelope(bodyBytes(rawBody), window);
}

/** constructGuardEvent of the Node entry (every event type), on WebCrypto. */
export async function constructGuardEventAsync(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): Promise<GuardEvent> {
  const secrets = checkSecrets(secret);
  const window = replayWindow(options);
  await verifyEither(rawBody, headers, secrets, window);
  return parseEnvelope(bodyBytes(rawBody), window, true);
}
