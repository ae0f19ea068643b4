// A local S3 for the tests: s3rver (npm) keeps the objects, and a gate of ours in front of it
// does what s3rver does not (DESIGN §9: it checks no signature): every presigned request is
// verified by sigv4-verify.ts and held to S3's rules for a presigned PUT — one auth mechanism,
// an exact Content-Length, no chunked body (501, as S3), a body matching the signed
// x-amz-checksum-sha256 (400 BadDigest, nothing kept) — and a request with no auth at all is
// refused (a private bucket). The gate also keeps each verified checksum and answers it on
// HeadObject with ChecksumMode ENABLED, as S3 does (`checksums: false` leaves that out, like an
// S3-compatible server without flexible checksums). Requests signed in the Authorization
// header (guard-server's own S3 client) are passed through.
// Everything listens on 127.0.0.1; nothing leaves the machine.

import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { type S3Credentials, verifyPresigned } from './sigv4-verify.ts';

export const TEST_BUCKET = 'guard-bundles';
/** s3rver's built-in account; the server under test gets them through the AWS SDK's env chain. */
export const TEST_CREDENTIALS: S3Credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
/** The largest body the gate holds in memory to check it. */
const GATE_MAX_BODY_BYTES = 256 * 1024 * 1024;

export interface GateRecord {
  method: string;
  url: string;
  /** 'presigned' (verified), 'header' (Authorization, passed through), 'anonymous'. */
  auth: 'presigned' | 'header' | 'anonymous';
  /** Why the gate refused it; undefined when it went on to s3rver. */
  refused: string | undefined;
  /** The status the client got. */
  status: number;
  /** The request's headers as they arrived. */
  headers: http.IncomingHttpHeaders;
}

export interface LocalS3 {
  /** The gate's URL: the S3 endpoint guard-server and agents use. */
  endpoint: string;
  bucket: string;
  /** The --object-store value for guard-server. */
  objectStoreUrl: string;
  /** Every request the gate saw, in order. */
  log: GateRecord[];
  /** The presigned requests the gate accepted. */
  verified(): GateRecord[];
  /**
   * Faults a test turns on and off: `denyDeletes` answers every DeleteObject 403 AccessDenied,
   * as S3 does under a bucket policy that denies s3:DeleteObject.
   */
  faults: { denyDeletes: boolean };
  close(): Promise<void>;
}

function s3Error(res: http.ServerResponse, status: number, code: string, message: string): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The object key of a path-style request /<bucket>/<key>, or undefined. */
function objectKeyOf(url: string, bucket: string): string | undefined {
  const path = decodeURIComponent(url.split('?')[0]);
  return path.startsWith(`/${bucket}/`) ? path.slice(bucket.length + 2) : undefined;
}

export async function startLocalS3(
  options: { now?: () => Date; checksums?: boolean; credentials?: S3Credentials } = {},
): Promise<LocalS3> {
  const now = options.now ?? (() => new Date());
  const credentials = options.credentials ?? TEST_CREDENTIALS;
  const keepChecksums = options.checksums !== false;
  const directory = await mkdtemp(join(os.tmpdir(), 'guard-s3rver-'));
  const s3rver = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: TEST_BUCKET, configs: [] }],
  });
  const backend = (await s3rver.run()) as AddressInfo;
  const checksums = new Map<string, string>();
  const log: GateRecord[] = [];
  const faults = { denyDeletes: false };

  const forward = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer | undefined, key?: string) =>
    new Promise<void>((resolve) => {
      const headers = { ...req.headers, host: `127.0.0.1:${backend.port}` };
      // A presigned request goes on without its auth parameters: the gate decided, by the
      // test's clock (s3rver would check the expiry by the machine's).
      // Its response-* overrides are applied here too: s3rver, like S3, refuses them on an
      // anonymous request.
      const target = new URL(req.url ?? '/', 'http://s3rver');
      const overrides: Record<string, string> = {};
      for (const name of [...target.searchParams.keys()]) {
        const lower = name.toLowerCase();
        if (lower.startsWith('response-'))
          overrides[lower.slice('response-'.length)] = target.searchParams.get(name) ?? '';
        if (lower.startsWith('x-amz-') || lower.startsWith('response-')) target.searchParams.delete(name);
      }
      const up = http.request(
        {
          host: '127.0.0.1',
          port: backend.port,
          method: req.method,
          path: `${target.pathname}${target.search}`,
          headers,
        },
        (answer) => {
          const out = { ...answer.headers };
          if (answer.statusCode === 200) Object.assign(out, overrides);
          const mode = req.headers['x-amz-checksum-mode'];
          if (keepChecksums && req.method === 'HEAD' && mode === 'ENABLED' && key && checksums.has(key)) {
            out['x-amz-checksum-sha256'] = checksums.get(key);
            out['x-amz-checksum-type'] = 'FULL_OBJECT';
          }
          res.writeHead(answer.statusCode ?? 502, out);
          answer.pipe(res);
          answer.on('end', resolve);
        },
      );
      up.on('error', (error) => {
        s3Error(res, 502, 'BadGateway', error.message);
        resolve();
      });
      if (body) up.end(body);
      else req.pipe(up);
    });

  const gate = http.createServer(async (req, res) => {
    const record: GateRecord = {
      method: req.method ?? '',
      url: req.url ?? '',
      auth: 'anonymous',
      refused: undefined,
      status: 0,
      headers: req.headers,
    };
    log.push(record);
    res.on('finish', () => {
      record.status = res.statusCode;
    });
    const refuse = (status: number, code: string, why: string) => {
      record.refused = why;
      req.resume();
      s3Error(res, status, code, why);
    };
    const key = objectKeyOf(req.url ?? '', TEST_BUCKET);
    const presigned = /[?&]X-Amz-Signature=/.test(req.url ?? '');
    if (req.headers.authorization !== undefined && !presigned) {
      record.auth = 'header';
      // guard-server's own client (import's PutObject among them): the body checks of S3 hold.
      if (req.method === 'PUT' && key && req.headers['x-amz-checksum-sha256']) {
        const body = await readBody(req, GATE_MAX_BODY_BYTES);
        if (!body) return refuse(400, 'EntityTooLarge', 'too large for the test gate');
        const decoded = decodeAwsChunked(body, req.headers['content-encoding']);
        const digest = createHash('sha256').update(decoded).digest('base64');
        if (digest !== req.headers['x-amz-checksum-sha256'])
          return refuse(400, 'BadDigest', 'The SHA256 you specified did not match the calculated checksum.');
        checksums.set(key, digest);
        return forward(req, res, body, key);
      }
      if (req.method === 'DELETE' && faults.denyDeletes)
        return refuse(403, 'AccessDenied', 'Access Denied (a bucket policy denies s3:DeleteObject)');
      if (req.method === 'DELETE' && key) checksums.delete(key);
      return forward(req, res, undefined, key);
    }
    if (!presigned) return refuse(403, 'AccessDenied', 'Access Denied (the test bucket is private)');
    record.auth = 'presigned';
    const verdict = await verifyPresigned(
      { method: req.method ?? '', url: req.url ?? '', headers: req.headers },
      credentials,
      now(),
    );
    if (!verdict.ok)
      return refuse(403, verdict.reason === 'expired' ? 'AccessDenied' : 'SignatureDoesNotMatch', verdict.reason);
    if (req.method !== 'PUT') return forward(req, res, undefined, key);
    if (req.headers['transfer-encoding'] !== undefined)
      return refuse(501, 'NotImplemented', 'A header you provided implies functionality that is not implemented');
    const length = Number(req.headers['content-length']);
    if (!Number.isSafeInteger(length)) return refuse(411, 'MissingContentLength', 'You must provide Content-Length');
    if (!verdict.signedHeaders.includes('content-length')) return refuse(403, 'AccessDenied', 'length not signed');
    const body = await readBody(req, GATE_MAX_BODY_BYTES);
    if (!body || body.length !== length) return refuse(400, 'IncompleteBody', 'the body is not Content-Length long');
    const digest = createHash('sha256').update(body).digest('base64');
    const claimed = req.headers['x-amz-checksum-sha256'];
    if (claimed !== undefined && claimed !== digest)
      return refuse(400, 'BadDigest', 'The SHA256 you specified did not match the calculated checksum.');
    if (key) checksums.set(key, digest);
    return forward(req, res, body, key);
  });
  gate.listen(0, '127.0.0.1');
  await once(gate, 'listening');
  const endpoint = `http://127.0.0.1:${(gate.address() as AddressInfo).port}`;
  return {
    endpoint,
    bucket: TEST_BUCKET,
    objectStoreUrl: `s3://${TEST_BUCKET}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&path_style=1`,
    log,
    verified: () => log.filter((r) => r.auth === 'presigned' && r.refused === undefined),
    faults,
    async close() {
      gate.closeAllConnections();
      await new Promise((r) => gate.close(r));
      await s3rver.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** A body sent with Content-Encoding aws-chunked, decoded (chunk-size;chunk-signature=…\r\n data \r\n …). */
function decodeAwsChunked(body: Buffer, encoding: string | string[] | undefined): Buffer {
  if (!String(encoding ?? '').includes('aws-chunked')) return body;
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    const size = Number.parseInt(body.subarray(at, eol).toString('latin1').split(';')[0], 16);
    if (!size) break;
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** Sets the AWS SDK's default-chain credentials of this process to the local S3's. */
export function useTestCredentials(): void {
  process.env.AWS_ACCESS_KEY_ID = TEST_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = TEST_CREDENTIALS.secretAccessKey;
}
