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
  type RawBody,
  replayWindow,
  SIGNATURE_HEADER,
  SIGNATURE_PREFIX,
  type SignalCreatedEvent,
  toHex,
  WebhookVerificationError,
} from './envelope.ts';

// The envelope's types, the errors and the header names: the same public list for both entries.
export * from './public-api.ts';

async function hmac(secret: string, bytes: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, bytes as Uint8Array<ArrayBuffer>));
}

export async function signAsync(rawBody: RawBody, secret: string): Promise<string> {
  return SIGNATURE_PREFIX + toHex(await hmac(secret, bodyBytes(rawBody)));
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
  await verifyChecked(rawBody, headerValue(headers, SIGNATURE_HEADER), secrets);
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
  await verifyChecked(rawBody, headerValue(headers, SIGNATURE_HEADER), secrets);
  return parseEnvelope(bodyBytes(rawBody), window, true);
}
