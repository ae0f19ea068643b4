// @guard/webhooks/web: the same checks on WebCrypto (crypto.subtle), for edge runtimes
// (Cloudflare Workers, Vercel Edge, Deno, Bun, browsers). Async, because subtle is.

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
  toHex,
  WebhookVerificationError,
} from './envelope.ts';

export * from './envelope.ts';

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

/** WebCrypto's verify compares in constant time. */
export async function verifySignatureAsync(
  rawBody: RawBody,
  header: string | undefined,
  secret: string | readonly string[],
): Promise<void> {
  const got = parseSignatureHeader(header);
  const bytes = bodyBytes(rawBody);
  let ok = false;
  for (const s of typeof secret === 'string' ? [secret] : secret) {
    const key = await crypto.subtle.importKey(
      'raw',
      new TextEncoder().encode(s),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    ok =
      (await crypto.subtle.verify('HMAC', key, got as Uint8Array<ArrayBuffer>, bytes as Uint8Array<ArrayBuffer>)) || ok;
  }
  if (!ok)
    throw new WebhookVerificationError('signature_mismatch', 'the Guard-Signature does not match the body and secret');
}

export async function constructEventAsync(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): Promise<SignalCreatedEvent> {
  await verifySignatureAsync(rawBody, headerValue(headers, SIGNATURE_HEADER), secret);
  return parseEnvelope(bodyBytes(rawBody), options);
}
