// The V1 webhook envelope (spec 2.6) and its validation. Shared by the Node and WebCrypto
// entry points; no imports, so it runs anywhere.

export const SIGNATURE_HEADER = 'guard-signature';
export const EVENT_HEADER = 'guard-event';
export const DELIVERY_HEADER = 'guard-delivery';
export const TIMESTAMP_HEADER = 'guard-timestamp';
export const SIGNATURE_PREFIX = 'sha256=';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export interface SignalData {
  signal_id: string;
  signal_type: string;
  /** 1 (info) … 5 (critical). */
  severity: 1 | 2 | 3 | 4 | 5;
  description: string;
  server_id: string;
  server_name: string;
  identity_id: string;
  identity_name: string;
  environment: string;
  created_at: string;
}

export interface SignalCreatedEvent {
  event_type: 'signal_created';
  version: 'v1';
  /** When this delivery attempt was sent (signed: part of the body). */
  timestamp: string;
  tenant_id: string;
  data: SignalData;
  console_url: string;
}

export type WebhookErrorCode =
  | 'missing_signature'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'invalid_body'
  | 'invalid_payload'
  | 'unsupported_event'
  | 'timestamp_too_old'
  | 'timestamp_in_future';

/** Thrown by verify and constructEvent; `code` says what failed, the message says how. */
export class WebhookVerificationError extends Error {
  readonly code: WebhookErrorCode;
  constructor(code: WebhookErrorCode, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.code = code;
  }
}

export type RawBody = string | Uint8Array | ArrayBuffer;
/** A Fetch `Headers`, or Node's `req.headers` (lowercase keys, possibly arrays). */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface ConstructEventOptions {
  /** How far the signed `timestamp` may be from now, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** Clock, for tests. */
  now?: () => Date;
}

export function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function')
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  let value = record[name];
  if (value === undefined) {
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  return Array.isArray(value) ? value[0] : value;
}

/** Returns the 32 signature bytes of a `sha256=<64 hex>` header, or throws. */
export function parseSignatureHeader(header: string | undefined): Uint8Array {
  if (header === undefined || header === '')
    throw new WebhookVerificationError('missing_signature', 'the Guard-Signature header is missing');
  const value = header.trim();
  if (!value.startsWith(SIGNATURE_PREFIX) || !/^[0-9a-fA-F]{64}$/.test(value.slice(SIGNATURE_PREFIX.length)))
    throw new WebhookVerificationError(
      'malformed_signature',
      'the Guard-Signature header must be "sha256=" followed by 64 hex digits',
    );
  const hex = value.slice(SIGNATURE_PREFIX.length);
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

export function bodyBytes(rawBody: RawBody): Uint8Array {
  if (typeof rawBody === 'string') return new TextEncoder().encode(rawBody);
  if (rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  throw new WebhookVerificationError(
    'invalid_body',
    'pass the raw request body (string, Buffer or Uint8Array), not parsed JSON: the signature covers the exact bytes received',
  );
}

/** Constant-time equality of two byte arrays of the same length. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

const STRING_FIELDS = [
  'signal_id',
  'signal_type',
  'description',
  'server_id',
  'server_name',
  'identity_id',
  'identity_name',
  'environment',
  'created_at',
] as const;

/** Parses and checks a verified body; refuses an envelope whose signed timestamp is stale. */
export function parseEnvelope(bytes: Uint8Array, options: ConstructEventOptions): SignalCreatedEvent {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'the body is not valid UTF-8 JSON');
  }
  const bad = (what: string): never => {
    throw new WebhookVerificationError('invalid_payload', `the envelope ${what}`);
  };
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return bad('is not a JSON object');
  const e = doc as Record<string, unknown>;
  if (e.event_type !== 'signal_created')
    throw new WebhookVerificationError(
      'unsupported_event',
      `event_type ${JSON.stringify(e.event_type)} is not signal_created`,
    );
  if (e.version !== 'v1')
    throw new WebhookVerificationError('unsupported_event', `version ${JSON.stringify(e.version)} is not v1`);
  for (const f of ['timestamp', 'tenant_id', 'console_url'] as const)
    if (typeof e[f] !== 'string') bad(`field ${f} is not a string`);
  const data = e.data as Record<string, unknown>;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) bad('field data is not an object');
  for (const f of STRING_FIELDS) if (typeof data[f] !== 'string') bad(`field data.${f} is not a string`);
  if (!Number.isInteger(data.severity) || (data.severity as number) < 1 || (data.severity as number) > 5)
    bad('field data.severity is not an integer from 1 to 5');
  const sent = Date.parse(e.timestamp as string);
  if (Number.isNaN(sent)) bad('field timestamp is not an ISO 8601 time');
  const tolerance = (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS) * 1000;
  const now = (options.now ?? (() => new Date()))().getTime();
  if (sent < now - tolerance)
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `the envelope timestamp ${e.timestamp} is more than ${tolerance / 1000} s old (a replay?)`,
    );
  if (sent > now + tolerance)
    throw new WebhookVerificationError(
      'timestamp_in_future',
      `the envelope timestamp ${e.timestamp} is more than ${tolerance / 1000} s in the future (check the clock)`,
    );
  return doc as SignalCreatedEvent;
}
