// Presigned PUT URLs served by guard-server itself. The signature is an HMAC (key derived
// from the master key) over everything the URL grants: method, object key, tenant, exact
// size, SHA-256 and expiry. Verification recomputes it and compares in constant time.

import { createHmac, timingSafeEqual } from 'node:crypto';

export interface PresignGrant {
  method: 'PUT';
  objectKey: string;
  tenantId: string;
  size: number;
  sha256: string;
  /** Unix seconds. */
  expires: number;
}

export const OBJECTS_PATH = '/v1/objects/';
const Q = {
  tenant: 'X-Guard-Tenant',
  size: 'X-Guard-Size',
  sha256: 'X-Guard-Sha256',
  expires: 'X-Guard-Expires',
  signature: 'X-Guard-Signature',
} as const;

function canonical(g: PresignGrant): string {
  return ['GUARD-PRESIGN-V1', g.method, g.objectKey, g.tenantId, String(g.size), g.sha256, String(g.expires)].join(
    '\n',
  );
}

export function signGrant(key: Buffer, grant: PresignGrant): string {
  return createHmac('sha256', key).update(canonical(grant)).digest('base64url');
}

export function presignedUrl(baseUrl: string, key: Buffer, grant: PresignGrant): string {
  const url = new URL(`${baseUrl}${OBJECTS_PATH}${grant.objectKey}`);
  url.searchParams.set(Q.tenant, grant.tenantId);
  url.searchParams.set(Q.size, String(grant.size));
  url.searchParams.set(Q.sha256, grant.sha256);
  url.searchParams.set(Q.expires, String(grant.expires));
  url.searchParams.set(Q.signature, signGrant(key, grant));
  return url.toString();
}

export type GrantCheck =
  | { ok: true; grant: PresignGrant }
  | { ok: false; code: 'invalid_signature' | 'url_expired' | 'malformed_url'; message: string };

/** Checks a presigned request's object key and query; `now` is injected (tests move it). */
export function checkGrant(key: Buffer, objectKey: string, query: Record<string, unknown>, now: Date): GrantCheck {
  const get = (name: string): string | undefined =>
    typeof query[name] === 'string' ? (query[name] as string) : undefined;
  const size = Number(get(Q.size));
  const expires = Number(get(Q.expires));
  const tenantId = get(Q.tenant);
  const sha256 = get(Q.sha256);
  const signature = get(Q.signature);
  if (!tenantId || !sha256 || !signature || !Number.isSafeInteger(size) || !Number.isSafeInteger(expires))
    return { ok: false, code: 'malformed_url', message: 'the presigned URL is missing or has malformed parameters' };
  const grant: PresignGrant = { method: 'PUT', objectKey, tenantId, size, sha256, expires };
  const want = Buffer.from(signGrant(key, grant));
  const got = Buffer.from(signature);
  if (got.length !== want.length || !timingSafeEqual(got, want))
    return { ok: false, code: 'invalid_signature', message: 'the presigned URL signature does not match' };
  if (now.getTime() >= expires * 1000)
    return { ok: false, code: 'url_expired', message: 'the presigned URL has expired' };
  return { ok: true, grant };
}
