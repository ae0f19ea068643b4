// Wire contract of the /v1 API (DESIGN §4, §6). One TypeBox schema per body: the server
// validates with it and publishes it in its OpenAPI document; the agent types its client
// with Static<>. Field names here are fixed by the contract.

import { type Static, Type } from 'typebox';

export const SHA256_HEX_PATTERN = '^[0-9a-f]{64}$';
/** Largest bundle the service accepts by default (the 1 GiB upload benchmark fits). */
export const DEFAULT_MAX_BUNDLE_BYTES = 2 * 1024 * 1024 * 1024;
/** Presigned URLs live 15 minutes (spec 8). */
export const PRESIGN_TTL_SECONDS = 15 * 60;

export const Sha256Hex = Type.String({ pattern: SHA256_HEX_PATTERN, description: 'SHA-256, 64 lowercase hex digits' });
export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 UTC timestamp' });

export const ApiErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'snake_case error code', examples: ['invalid_request'] }),
      message: Type.String({ description: 'what went wrong, for people' }),
    }),
  },
  { $id: 'ApiError', description: 'Every 4xx/5xx response' },
);
export type ApiErrorBody = Static<typeof ApiErrorBody>;

// --- support bundle upload (DESIGN §4) -------------------------------------------------

export const UploadUrlRequest = Type.Object(
  {
    filename: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^/\\\\\\u0000]+$' }),
    size: Type.Integer({ minimum: 1, description: 'bytes' }),
    sha256: Sha256Hex,
  },
  { additionalProperties: false },
);
export type UploadUrlRequest = Static<typeof UploadUrlRequest>;

export const UploadUrlResponse = Type.Object({
  url: Type.String({ description: 'presigned PUT URL; send no Authorization header to it' }),
  object_key: Type.String(),
  expires_at: Timestamp,
  headers: Type.Optional(
    Type.Record(Type.String(), Type.String(), { description: 'exact extra headers the PUT must carry' }),
  ),
});
export type UploadUrlResponse = Static<typeof UploadUrlResponse>;

export const RegisterRequest = Type.Object(
  {
    object_key: Type.String({ minLength: 1, maxLength: 512 }),
    sha256: Sha256Hex,
    size: Type.Integer({ minimum: 1 }),
    manifest: Type.Record(Type.String(), Type.Unknown(), { description: 'the bundle BUNDLE-MANIFEST.json' }),
  },
  { additionalProperties: false },
);
export type RegisterRequest = Static<typeof RegisterRequest>;

export const RegisterResponse = Type.Object({
  bundle_id: Type.String(),
  object_key: Type.String(),
  uploaded_at: Timestamp,
});
export type RegisterResponse = Static<typeof RegisterResponse>;

// --- enrolment (DESIGN §3 contract — enrolment) ----------------------------------------

export const EnrollRequest = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200 }),
    hostname: Type.Optional(Type.String({ maxLength: 255 })),
    environment: Type.Optional(Type.String({ maxLength: 100 })),
    agent_version: Type.Optional(Type.String({ maxLength: 50 })),
  },
  { additionalProperties: false },
);
export type EnrollRequest = Static<typeof EnrollRequest>;

export const EnrollResponse = Type.Object({
  agent_id: Type.String(),
  tenant_id: Type.String(),
  api_key: Type.String({ description: 'shown once; the agent stores it in enrollment.json' }),
});
export type EnrollResponse = Static<typeof EnrollResponse>;

/** `<state_dir>/enrollment.json`, written by `guard-agent enroll` (mode 0600). */
export interface Enrollment {
  base_url: string;
  api_key: string;
  tenant_id: string;
  agent_id: string;
  enrolled_at: string;
}
