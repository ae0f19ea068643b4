// An independent check of S3 presigned URLs (SigV4 query-string auth), for the tests: the S3
// server they run against (s3rver) checks no signature, so every presigned request the tests
// send passes through this first (s3-harness.ts). It reads the request as it arrives on the
// wire (method, raw path, query, headers), rebuilds the canonical request with
// @smithy/signature-v4 and compares the signature; then it applies the rules S3 applies to a
// presigned request: an expiry, the headers it names are present, no unsigned x-amz-* header,
// and one auth mechanism only. The body checks S3 makes (exact Content-Length, the signed
// x-amz-checksum-sha256) are in the gate (s3-harness.ts), which has the body.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface WireRequest {
  method: string;
  /** The request target as sent: raw path and query string. */
  url: string;
  /** Lowercase names (node:http's req.headers). */
  headers: Record<string, string | string[] | undefined>;
}

export type Verdict = { ok: true; signedHeaders: string[]; expiresAt: Date } | { ok: false; reason: string };

function bytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** node:crypto behind the Checksum interface @smithy/signature-v4 asks for. */
class NodeSha256 {
  private readonly hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: Uint8Array): void {
    this.hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    throw new Error('not used');
  }
}

const REQUIRED = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders'];
const MAX_EXPIRES_SECONDS = 7 * 24 * 3600;

function parseAmzDate(text: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  return m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])) : undefined;
}

function header(req: WireRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/**
 * Verifies one presigned request against `credentials` at time `now`. `host` is the Host the
 * request was sent to (the signature binds it).
 */
export async function verifyPresigned(req: WireRequest, credentials: S3Credentials, now: Date): Promise<Verdict> {
  const fail = (reason: string): Verdict => ({ ok: false, reason });
  const target = new URL(req.url, 'http://placeholder');
  const q = target.searchParams;
  const signature = q.get('X-Amz-Signature');
  if (!signature) return fail('not a presigned request: no X-Amz-Signature');
  for (const name of REQUIRED) if (!q.get(name)) return fail(`${name} is missing`);
  if (header(req, 'authorization') !== undefined) return fail('two auth mechanisms: query signature and Authorization');
  if (q.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256') return fail('X-Amz-Algorithm is not AWS4-HMAC-SHA256');
  const [accessKeyId, shortDate, region, service, terminator, ...extra] = (q.get('X-Amz-Credential') ?? '').split('/');
  if (extra.length > 0 || terminator !== 'aws4_request' || service !== 's3')
    return fail('X-Amz-Credential is malformed');
  if (accessKeyId !== credentials.accessKeyId) return fail('unknown access key');
  const signedAt = parseAmzDate(q.get('X-Amz-Date') ?? '');
  if (!signedAt) return fail('X-Amz-Date is malformed');
  if (shortDate !== q.get('X-Amz-Date')?.slice(0, 8)) return fail('the credential scope date is not X-Amz-Date');
  const expires = Number(q.get('X-Amz-Expires'));
  if (!Number.isInteger(expires) || expires < 1 || expires > MAX_EXPIRES_SECONDS)
    return fail('X-Amz-Expires is out of range');
  const expiresAt = new Date(signedAt.getTime() + expires * 1000);
  if (now.getTime() > expiresAt.getTime()) return fail('expired');

  const signedHeaders = (q.get('X-Amz-SignedHeaders') ?? '').split(';');
  if (!signedHeaders.includes('host')) return fail('host is not a signed header');
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = header(req, name);
    if (value === undefined) return fail(`signed header ${name} is missing from the request`);
    headers[name] = value;
  }
  for (const name of Object.keys(req.headers))
    if (name.startsWith('x-amz-') && !signedHeaders.includes(name)) return fail(`header ${name} is not signed`);

  // The canonical query is every parameter but the signature. The payload hash of a presigned
  // request is UNSIGNED-PAYLOAD unless the URL says otherwise (X-Amz-Content-Sha256).
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(q.keys())) {
    if (name === 'X-Amz-Signature') continue;
    const values = q.getAll(name);
    query[name] = values.length === 1 ? values[0] : values;
  }
  // Handed to the signer as a header (where it reads the payload hash from), under the name
  // the URL spells it with: hoisted back into the query, it must sort as it did when signed.
  const payloadInQuery = typeof query['X-Amz-Content-Sha256'] === 'string';
  if (payloadInQuery) {
    headers['X-Amz-Content-Sha256'] = query['X-Amz-Content-Sha256'] as string;
    delete query['X-Amz-Content-Sha256'];
  } else headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';

  const signer = new SignatureV4({
    credentials,
    region,
    service,
    sha256: NodeSha256,
    uriEscapePath: false, // S3 signs the path as sent
  });
  const rawPath = req.url.split('?')[0];
  const recomputed = await signer.presign(
    { method: req.method, protocol: 'http:', hostname: 'unused', path: rawPath, query, headers },
    {
      signingDate: signedAt,
      expiresIn: expires,
      signableHeaders: new Set(signedHeaders),
      unhoistableHeaders: new Set([...signedHeaders, ...(payloadInQuery ? [] : ['x-amz-content-sha256'])]),
      unsignableHeaders: new Set(['x-amz-content-sha256']),
    },
  );
  const signed = recomputed.query ?? {};
  if (signed['X-Amz-SignedHeaders'] !== q.get('X-Amz-SignedHeaders'))
    return fail(`signed headers differ: ${signed['X-Amz-SignedHeaders']}`);
  const want = Buffer.from(String(signed['X-Amz-Signature']));
  const got = Buffer.from(signature);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return fail('signature does not match');
  return { ok: true, signedHeaders, expiresAt };
}
