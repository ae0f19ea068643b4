// Wire contract of the /v1 API (DESIGN §4, §6). One schema per body: the server validates
// requests and serialises responses with it and publishes it in its OpenAPI document; the
// agent checks the service's answers against it (schema-check.ts) and types its client with
// Static<>. Field names here are fixed by the contract.
//
// Each schema is plain JSON Schema written `as const` and typed by TypeBox's Static (TypeBox 1
// infers a type from a JSON Schema literal as from its own builders, and its checkers and
// Fastify's type provider take either). Nothing of TypeBox is loaded to hold a schema: its
// builders cost the agent ~10 MiB of RSS on load, against an upload goal of ≤ 100 MiB
// (docs/decisions/0005-contract-schemas.md).

import type { Static } from 'typebox';

export const SHA256_HEX_PATTERN = '^[0-9a-f]{64}$';
/** Largest bundle the service accepts by default (the 1 GiB upload benchmark fits). */
export const DEFAULT_MAX_BUNDLE_BYTES = 2 * 1024 * 1024 * 1024;
/** Presigned URLs live 15 minutes (spec 8). */
export const PRESIGN_TTL_SECONDS = 15 * 60;

export const Sha256Hex = {
  type: 'string',
  pattern: SHA256_HEX_PATTERN,
  description: 'SHA-256, 64 lowercase hex digits',
} as const;
export const Timestamp = { type: 'string', format: 'date-time', description: 'RFC 3339 UTC timestamp' } as const;

export const ApiErrorBody = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'snake_case error code', examples: ['invalid_request'] },
        message: { type: 'string', description: 'what went wrong, for people' },
      },
    },
  },
  $id: 'ApiError',
  description: 'Every 4xx/5xx response',
} as const;
export type ApiErrorBody = Static<typeof ApiErrorBody>;

// --- support bundle upload (DESIGN §4) -------------------------------------------------

export const UploadUrlRequest = {
  type: 'object',
  required: ['filename', 'size', 'sha256'],
  properties: {
    filename: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^/\\\\\\u0000]+$' },
    size: { type: 'integer', minimum: 1, description: 'bytes' },
    sha256: Sha256Hex,
  },
  additionalProperties: false,
} as const;
export type UploadUrlRequest = Static<typeof UploadUrlRequest>;

export const UploadUrlResponse = {
  type: 'object',
  required: ['url', 'object_key', 'expires_at'],
  properties: {
    url: { type: 'string', description: 'presigned PUT URL; send no Authorization header to it' },
    object_key: { type: 'string' },
    expires_at: Timestamp,
    headers: {
      type: 'object',
      patternProperties: { '^.*$': { type: 'string' } },
      description: 'exact extra headers the PUT must carry',
    },
  },
} as const;
export type UploadUrlResponse = Static<typeof UploadUrlResponse>;

export const RegisterRequest = {
  type: 'object',
  required: ['object_key', 'sha256', 'size', 'manifest'],
  properties: {
    object_key: { type: 'string', minLength: 1, maxLength: 512 },
    sha256: Sha256Hex,
    size: { type: 'integer', minimum: 1 },
    // Checked by parseManifest (manifest.ts), so that a bad one is refused as invalid_manifest.
    manifest: { type: 'object', patternProperties: { '^.*$': {} }, description: 'the bundle BUNDLE-MANIFEST.json' },
  },
  additionalProperties: false,
} as const;
export type RegisterRequest = Static<typeof RegisterRequest>;

export const RegisterResponse = {
  type: 'object',
  required: ['bundle_id', 'object_key', 'uploaded_at'],
  properties: {
    bundle_id: { type: 'string' },
    object_key: { type: 'string' },
    uploaded_at: Timestamp,
  },
} as const;
export type RegisterResponse = Static<typeof RegisterResponse>;

// --- enrolment (DESIGN §3 contract — enrolment) ----------------------------------------

export const EnrollRequest = {
  type: 'object',
  required: ['token'],
  properties: {
    token: { type: 'string', minLength: 1, maxLength: 200 },
    hostname: { type: 'string', maxLength: 255 },
    environment: { type: 'string', maxLength: 100 },
    agent_version: { type: 'string', maxLength: 50 },
  },
  additionalProperties: false,
} as const;
export type EnrollRequest = Static<typeof EnrollRequest>;

export const EnrollResponse = {
  type: 'object',
  required: ['agent_id', 'tenant_id', 'api_key'],
  properties: {
    agent_id: { type: 'string' },
    tenant_id: { type: 'string' },
    api_key: { type: 'string', description: 'shown once; the agent stores it in enrollment.json' },
  },
} as const;
export type EnrollResponse = Static<typeof EnrollResponse>;

/** `<state_dir>/enrollment.json`, written by `guard-agent enroll` (mode 0600). */
export interface Enrollment {
  base_url: string;
  api_key: string;
  tenant_id: string;
  agent_id: string;
  enrolled_at: string;
}
