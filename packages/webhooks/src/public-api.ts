// What both entries (index.ts for Node, web.ts for WebCrypto) export besides their own
// functions: the envelope's types, the errors and the header names, as an explicit list. The
// helpers the entries share (secret and option checks, header parsing, byte handling) stay
// internal to envelope.ts.
export {
  type AuditEvent,
  type ConstructEventOptions,
  DEFAULT_TOLERANCE_SECONDS,
  DELIVERY_HEADER,
  type EndpointCertificateExpiringEvent,
  type EndpointDisabledEvent,
  type EndpointEventData,
  type EndpointFailingEvent,
  EVENT_HEADER,
  type GuardEvent,
  type HeaderSource,
  MAX_SIGNATURE_ENTRIES,
  type RawBody,
  SECRET_PREFIX,
  SIGNATURE_HEADER,
  SIGNATURE_PREFIX,
  type SignalCreatedEvent,
  type SignalData,
  STANDARD_SIGNATURE_PREFIX,
  TIMESTAMP_HEADER,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WebhookConfigurationError,
  type WebhookConfigurationErrorCode,
  type WebhookErrorCode,
  WebhookVerificationError,
} from './envelope.ts';
