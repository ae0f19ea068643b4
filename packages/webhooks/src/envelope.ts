// The V1 webhook envelope (spec 2.6) and its validation. Shared by the Node and WebCrypto
// entry points; no imports, so it runs anywhere.

export const SIGNATURE_HEADER = 'guard-signature';
export const EVENT_HEADER = 'guard-event';
export const DELIVERY_HEADER = 'guard-delivery';
export const TIMESTAMP_HEADER = 'guard-timestamp';
export const SIGNATURE_PREFIX = 'sha256=';
/** The Standard Webhooks headers (standardwebhooks.com), sent beside Guard's own. */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';
/** The version tag of a webhook-signature entry: `v1,<base64 HMAC-SHA256>`. */
export const STANDARD_SIGNATURE_PREFIX = 'v1,';
/** Every endpoint secret starts with it; the Standard Webhooks key is the base64 after it. */
export const SECRET_PREFIX = 'whsec_';
export const DEFAULT_TOLERANCE_SECONDS = 300;
/**
 * Most entries read from one Guard-Signature list (DESIGN 5, rotation: one per valid secret,
 * newest first). More is refused, so a forged header cannot make a receiver do unbounded work.
 */
export const MAX_SIGNATURE_ENTRIES = 8;

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

/** The `data` of an operational event about another endpoint of the tenant. */
export interface EndpointEventData {
  /** Unique per event: deduplicate on it (signed, unlike Guard-Delivery). */
  event_id: string;
  /** The endpoint the event is about (never the one receiving it). */
  endpoint_id: string;
  name: string;
  /** The endpoint URL's origin (scheme, host and port): never its path or query. */
  url: string;
  /** When its current run of failed attempts began. */
  failing_since: string;
  /** Failed attempts in a row so far. */
  failure_streak: number;
  /** The last attempt's error, as the attempt log shows it. */
  last_error: string;
}

/** An endpoint has failed for `percent` % (50, 75, 90) of the window after which Guard disables it. */
export interface EndpointFailingEvent {
  event_type: 'endpoint.failing';
  version: 'v1';
  timestamp: string;
  tenant_id: string;
  data: EndpointEventData & {
    percent: 50 | 75 | 90;
    /** When Guard disables the endpoint unless an attempt succeeds before. */
    disable_at: string;
    /** When the threshold was crossed. */
    occurred_at: string;
  };
  /** The endpoint's page in the console. */
  console_url: string;
}

/** Guard disabled an endpoint that failed for the whole window. */
export interface EndpointDisabledEvent {
  event_type: 'endpoint.disabled';
  version: 'v1';
  timestamp: string;
  tenant_id: string;
  data: EndpointEventData & {
    disabled_at: string;
    reason: string;
  };
  console_url: string;
}

/**
 * An endpoint's client certificate (mTLS) expires soon: sent 30, 7 and 1 days before, once each
 * per certificate, to every endpoint of the tenant that subscribes (the endpoint itself too:
 * it still works).
 */
export interface EndpointCertificateExpiringEvent {
  event_type: 'endpoint.certificate_expiring';
  version: 'v1';
  timestamp: string;
  tenant_id: string;
  data: {
    /** Unique per event: deduplicate on it. */
    event_id: string;
    endpoint_id: string;
    name: string;
    /** The endpoint URL's origin. */
    url: string;
    /** The certificate's subject, e.g. `O=Acme, CN=guard-deliveries.acme.example`. */
    certificate_subject: string;
    /** When it expires (its notAfter). */
    not_after: string;
    /** Whole days left then (0 on its last day). */
    days_left: number;
    /** The threshold crossed: 30, 7 or 1 days before the expiry. */
    threshold_days: 30 | 7 | 1;
  };
  console_url: string;
}

/**
 * An entry of the tenant's audit log (who read or changed what), for a SIEM: opt-in, sent to
 * every enabled endpoint of the tenant that subscribes to it.
 */
export interface AuditEvent {
  event_type: 'audit.event';
  version: 'v1';
  timestamp: string;
  tenant_id: string;
  data: {
    /** Unique per event: deduplicate on it. */
    event_id: string;
    /** The entry's id in the audit log. */
    id: string;
    /** When it happened. */
    at: string;
    /** Who: a user id, or a machine (`guard`, `sso:oidc`, `scim:<token id>`). */
    actor_id: string;
    /** admin, member, support, or the machine's: system, sso, scim. */
    actor_role: string;
    /** What, e.g. `user.create`, `bundle.show`, `tenant.settings`. */
    action: string;
    /** The id read or changed. */
    target: string;
    tenant_id: string;
  };
  /** The console's audit log page. */
  console_url: string;
}

/** Every event an endpoint may subscribe to; `event_type` (and the Guard-Event header) tells which. */
export type GuardEvent =
  | SignalCreatedEvent
  | EndpointFailingEvent
  | EndpointDisabledEvent
  | EndpointCertificateExpiringEvent
  | AuditEvent;

export type WebhookErrorCode =
  | 'missing_signature'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'invalid_body'
  | 'invalid_payload'
  | 'unsupported_event'
  | 'timestamp_too_old'
  | 'timestamp_in_future';

/**
 * Thrown by verify and constructEvent when the request is not to be trusted; `code` says what
 * failed, the message says how. Answer it with a 4xx.
 */
export class WebhookVerificationError extends Error {
  readonly code: WebhookErrorCode;
  constructor(code: WebhookErrorCode, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.code = code;
  }
}

export type WebhookConfigurationErrorCode = 'invalid_secret' | 'invalid_option';

/**
 * Thrown by verify and constructEvent, before the request is looked at, when the receiver
 * itself is misconfigured: `invalid_secret` (unset, empty, not a string) or `invalid_option`
 * (the message names the option). Not a WebhookVerificationError on purpose: let it become a
 * 5xx, so Guard retries the delivery once the receiver is fixed.
 */
export class WebhookConfigurationError extends Error {
  readonly code: WebhookConfigurationErrorCode;
  constructor(code: WebhookConfigurationErrorCode, message: string) {
    super(message);
    this.name = 'WebhookConfigurationError';
    this.code = code;
  }
}

export type RawBody = string | Uint8Array | ArrayBuffer;
/** A Fetch `Headers`, or Node's `req.headers` (lowercase keys, possibly arrays). */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface ConstructEventOptions {
  /** How far the signed `timestamp` may be from now, either way: a finite number ≥ 0. Default 300 s. */
  toleranceSeconds?: number;
  /** Clock, for tests: returns a valid Date. */
  now?: () => Date;
}

/** The checked replay window of one constructEvent call. */
export interface ReplayWindow {
  toleranceSeconds: number;
  nowMs: number;
}

const shown = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : String(value));

/**
 * Checks the receiver's secret (one, or a list while it rotates) and returns it as a list.
 * An empty key is refused: anyone can compute an HMAC under it.
 */
export function checkSecrets(secret: unknown): readonly string[] {
  const fail = (why: string): never => {
    throw new WebhookConfigurationError('invalid_secret', why);
  };
  if (secret === undefined || secret === null)
    fail(
      `the webhook secret is not set (${secret}): pass the endpoint's whsec_… secret, for example from process.env.GUARD_WEBHOOK_SECRET`,
    );
  const list = typeof secret === 'string' ? [secret] : Array.isArray(secret) ? (secret as unknown[]) : undefined;
  if (list === undefined) return fail(`the webhook secret must be a string or a list of strings, not ${typeof secret}`);
  if (list.length === 0) fail('the webhook secret list is empty');
  list.forEach((s, i) => {
    const which = typeof secret === 'string' ? 'the webhook secret' : `webhook secret [${i}]`;
    if (typeof s !== 'string')
      fail(`${which} is ${s === undefined || s === null ? 'not set' : `a ${typeof s}`}, not a string`);
    if (s === '') fail(`${which} is empty: an empty key would accept a body anyone can sign`);
  });
  return list as string[];
}

/** Checks constructEvent's options and reads the clock once. */
export function replayWindow(options: ConstructEventOptions | undefined | null): ReplayWindow {
  const fail = (why: string): never => {
    throw new WebhookConfigurationError('invalid_option', why);
  };
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object') return fail(`options must be an object, not ${typeof options}`);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0)
    fail(
      `options.toleranceSeconds must be a finite number of seconds ≥ 0 (default ${DEFAULT_TOLERANCE_SECONDS}), not ${shown(tolerance)}: anything else would disable the replay window`,
    );
  if (options.now !== undefined && typeof options.now !== 'function')
    fail(`options.now must be a function returning a Date, not ${shown(options.now)}`);
  const now: unknown = (options.now ?? (() => new Date()))();
  const nowMs = now instanceof Date ? now.getTime() : Number.NaN;
  if (!Number.isFinite(nowMs)) fail(`options.now() must return a valid Date, not ${shown(now)}`);
  return { toleranceSeconds: tolerance, nowMs };
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
  // Several header lines are one HTTP list, as Node's req.headers and Fetch's get() join them.
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * Returns the 32-byte digests of the `sha256=<64 hex>` entries of a Guard-Signature header, or
 * throws. The header is an HTTP list (DESIGN 5, rotation): one entry outside a rotation, one per
 * valid secret during one, newest first, separated by `, `. Whitespace around entries and empty
 * elements are tolerated, entries of other schemes (`v2=…`) are ignored, a malformed `sha256=`
 * entry or more than MAX_SIGNATURE_ENTRIES entries make the whole header malformed.
 */
export function parseSignatureHeader(header: string | undefined): Uint8Array[] {
  if (header === undefined || header === '')
    throw new WebhookVerificationError('missing_signature', 'the Guard-Signature header is missing');
  const malformed = (why: string): never => {
    throw new WebhookVerificationError('malformed_signature', `the Guard-Signature header ${why}`);
  };
  const digests: Uint8Array[] = [];
  let entries = 0;
  for (const element of header.split(',')) {
    const entry = element.trim();
    if (entry === '') continue;
    if (++entries > MAX_SIGNATURE_ENTRIES) malformed(`has more than ${MAX_SIGNATURE_ENTRIES} entries`);
    if (!entry.startsWith(SIGNATURE_PREFIX)) continue;
    const hex = entry.slice(SIGNATURE_PREFIX.length);
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) malformed('has a "sha256=" entry that is not followed by 64 hex digits');
    const bytes = new Uint8Array(32);
    for (let i = 0; i < 32; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
    digests.push(bytes);
  }
  if (digests.length === 0) malformed('must be "sha256=" followed by 64 hex digits (or a list of such entries)');
  return digests;
}

/**
 * The Standard Webhooks HMAC key of a secret: the bytes its text after `whsec_` decodes to.
 * Secrets are issued in standard base64 with padding; those issued before in base64url decode
 * the same way (either alphabet, padding optional), so both keep working.
 */
export function standardKey(secret: string): Uint8Array {
  const text = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const unpadded = text.replace(/={1,2}$/, '');
  if (!/^[A-Za-z0-9+/_-]+$/.test(unpadded) || unpadded.length % 4 === 1)
    throw new WebhookConfigurationError(
      'invalid_secret',
      `the webhook secret is not ${SECRET_PREFIX} followed by base64, so it cannot key the Standard Webhooks signature (webhook-signature); pass the endpoint's secret exactly as Guard showed it`,
    );
  const standard = unpadded.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(standard + '='.repeat((4 - (standard.length % 4)) % 4));
  const key = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) key[i] = binary.charCodeAt(i);
  return key;
}

/** The bytes a webhook-signature entry signs: `<webhook-id>.<webhook-timestamp>.<raw body>`. */
export function standardSignedContent(id: string, timestamp: string, body: Uint8Array): Uint8Array {
  const head = new TextEncoder().encode(`${id}.${timestamp}.`);
  const content = new Uint8Array(head.length + body.length);
  content.set(head);
  content.set(body, head.length);
  return content;
}

/** A checked Standard Webhooks request: what its entries sign, and the 32-byte digests they carry. */
export interface StandardSignature {
  content: Uint8Array;
  digests: Uint8Array[];
}

/**
 * Reads and checks the three Standard Webhooks headers: `webhook-id` present,
 * `webhook-timestamp` integer seconds within the replay window, `webhook-signature` a
 * space-separated list of `v1,<base64 of 32 bytes>` (entries of other versions are ignored,
 * at most MAX_SIGNATURE_ENTRIES in all). Throws WebhookVerificationError.
 */
export function parseStandardHeaders(headers: HeaderSource, body: Uint8Array, window: ReplayWindow): StandardSignature {
  const id = headerValue(headers, WEBHOOK_ID_HEADER);
  const timestamp = headerValue(headers, WEBHOOK_TIMESTAMP_HEADER);
  const header = headerValue(headers, WEBHOOK_SIGNATURE_HEADER);
  if (!header) throw new WebhookVerificationError('missing_signature', 'the webhook-signature header is missing');
  if (!id || !timestamp)
    throw new WebhookVerificationError(
      'missing_signature',
      `the ${id ? 'webhook-timestamp' : 'webhook-id'} header is missing (webhook-signature signs it)`,
    );
  const malformed = (why: string): never => {
    throw new WebhookVerificationError('malformed_signature', `the webhook-signature header ${why}`);
  };
  if (!/^\d{1,12}$/.test(timestamp))
    throw new WebhookVerificationError('malformed_signature', 'the webhook-timestamp header is not integer seconds');
  const sentMs = Number(timestamp) * 1000;
  const tolerance = window.toleranceSeconds * 1000;
  if (sentMs < window.nowMs - tolerance)
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `the webhook-timestamp ${timestamp} is more than ${tolerance / 1000} s old (a replay?)`,
    );
  if (sentMs > window.nowMs + tolerance)
    throw new WebhookVerificationError(
      'timestamp_in_future',
      `the webhook-timestamp ${timestamp} is more than ${tolerance / 1000} s in the future (check the clock)`,
    );
  const digests: Uint8Array[] = [];
  let entries = 0;
  for (const entry of header.split(' ')) {
    if (entry === '') continue;
    if (++entries > MAX_SIGNATURE_ENTRIES) malformed(`has more than ${MAX_SIGNATURE_ENTRIES} entries`);
    if (!entry.startsWith(STANDARD_SIGNATURE_PREFIX)) continue;
    const b64 = entry.slice(STANDARD_SIGNATURE_PREFIX.length);
    if (!/^[A-Za-z0-9+/]{43}=$/.test(b64)) malformed('has a "v1," entry that is not the base64 of 32 bytes');
    const binary = atob(b64);
    const bytes = new Uint8Array(32);
    for (let i = 0; i < 32; i++) bytes[i] = binary.charCodeAt(i);
    digests.push(bytes);
  }
  if (digests.length === 0) malformed('must be "v1," followed by a base64 HMAC (or a space-separated list of them)');
  return { content: standardSignedContent(id, timestamp, body), digests };
}

/** Base64 (standard alphabet, padded) of bytes: a webhook-signature entry's digest. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
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

const CERTIFICATE_STRING_FIELDS = [
  'event_id',
  'endpoint_id',
  'name',
  'url',
  'certificate_subject',
  'not_after',
] as const;
const AUDIT_STRING_FIELDS = [
  'event_id',
  'id',
  'at',
  'actor_id',
  'actor_role',
  'action',
  'target',
  'tenant_id',
] as const;
const ENDPOINT_STRING_FIELDS = ['event_id', 'endpoint_id', 'name', 'url', 'failing_since', 'last_error'] as const;
const EXTRA_STRING_FIELDS = {
  'endpoint.failing': ['disable_at', 'occurred_at'],
  'endpoint.disabled': ['disabled_at', 'reason'],
} as const;

/**
 * Parses and checks a verified body; refuses an envelope whose signed timestamp is outside the
 * window. Only `signal_created` unless `anyEvent` (constructGuardEvent).
 */
export function parseEnvelope(bytes: Uint8Array, window: ReplayWindow): SignalCreatedEvent;
export function parseEnvelope(bytes: Uint8Array, window: ReplayWindow, anyEvent: true): GuardEvent;
export function parseEnvelope(bytes: Uint8Array, window: ReplayWindow, anyEvent = false): GuardEvent {
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
  const operational = anyEvent && (e.event_type === 'endpoint.failing' || e.event_type === 'endpoint.disabled');
  const certificate = anyEvent && e.event_type === 'endpoint.certificate_expiring';
  const auditEntry = anyEvent && e.event_type === 'audit.event';
  if (e.event_type !== 'signal_created' && !operational && !certificate && !auditEntry)
    throw new WebhookVerificationError(
      'unsupported_event',
      `event_type ${JSON.stringify(e.event_type)} is not ${anyEvent ? 'one of signal_created, endpoint.failing, endpoint.disabled, endpoint.certificate_expiring, audit.event' : 'signal_created (constructGuardEvent takes every event type)'}`,
    );
  if (e.version !== 'v1')
    throw new WebhookVerificationError('unsupported_event', `version ${JSON.stringify(e.version)} is not v1`);
  for (const f of ['timestamp', 'tenant_id', 'console_url'] as const)
    if (typeof e[f] !== 'string') bad(`field ${f} is not a string`);
  const data = e.data as Record<string, unknown>;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) bad('field data is not an object');
  if (auditEntry) {
    for (const f of AUDIT_STRING_FIELDS) if (typeof data[f] !== 'string') bad(`field data.${f} is not a string`);
  } else if (certificate) {
    for (const f of CERTIFICATE_STRING_FIELDS) if (typeof data[f] !== 'string') bad(`field data.${f} is not a string`);
    if (!Number.isInteger(data.days_left)) bad('field data.days_left is not an integer');
    if (![30, 7, 1].includes(data.threshold_days as number)) bad('field data.threshold_days is not 30, 7 or 1');
  } else if (operational) {
    const extra = EXTRA_STRING_FIELDS[e.event_type as keyof typeof EXTRA_STRING_FIELDS];
    for (const f of [...ENDPOINT_STRING_FIELDS, ...extra])
      if (typeof data[f] !== 'string') bad(`field data.${f} is not a string`);
    if (!Number.isInteger(data.failure_streak)) bad('field data.failure_streak is not an integer');
    if (e.event_type === 'endpoint.failing' && ![50, 75, 90].includes(data.percent as number))
      bad('field data.percent is not 50, 75 or 90');
  } else {
    for (const f of STRING_FIELDS) if (typeof data[f] !== 'string') bad(`field data.${f} is not a string`);
    if (!Number.isInteger(data.severity) || (data.severity as number) < 1 || (data.severity as number) > 5)
      bad('field data.severity is not an integer from 1 to 5');
  }
  const sent = Date.parse(e.timestamp as string);
  if (Number.isNaN(sent)) bad('field timestamp is not an ISO 8601 time');
  const tolerance = window.toleranceSeconds * 1000;
  const now = window.nowMs;
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
  return doc as GuardEvent;
}
