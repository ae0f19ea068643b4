// Object store in an S3-compatible bucket (DESIGN §1 scale-out, issue 11 item 3). Agents PUT
// bundles straight to the bucket through S3's own presigned URLs; guard-server never sees
// the bytes of an upload. What a presigned PUT binds (SigV4, query-string auth):
//   - the method, bucket and key, and the expiry (X-Amz-Expires, 15 minutes);
//   - `content-length` (a signed header: a body of another length is refused);
//   - `x-amz-checksum-sha256` (a signed header the agent sends as the presign response's
//     `headers` give it: S3 refuses a body whose SHA-256 differs, 400 BadDigest, and keeps
//     the checksum with the object, so HeadObject can answer register's question without a
//     read of the object).
// The client computes no checksum of its own (requestChecksumCalculation WHEN_REQUIRED): with
// the SDK's default it would sign an x-amz-checksum-crc32 of an empty body into every
// presigned PUT, which no real upload could match (DESIGN §9).

import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { LengthAndDigest } from './length-and-digest.ts';
import type { S3Location } from './settings.ts';
import {
  type ObjectExpectation,
  ObjectMismatchError,
  type ObjectStore,
  type PresignedPut,
  type UploadGrant,
} from './store.ts';

/** `--object-store s3://BUCKET?endpoint=…&region=…&path_style=1`, parsed (config.ts). */
/** A readiness probe that takes longer than this counts as a failure. */
const READY_TIMEOUT_MS = 3000;
/** Signed headers that the presigned PUT carries besides `host`. */
const CHECKSUM_HEADER = 'x-amz-checksum-sha256';

export function hexToBase64(hex: string): string {
  return Buffer.from(hex, 'hex').toString('base64');
}

function base64ToHex(b64: string): string {
  return Buffer.from(b64, 'base64').toString('hex');
}

/** S3 answers 404 as NotFound (HEAD, no body) or NoSuchKey (GET). */
function isNotFound(error: unknown): boolean {
  return error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404;
}

export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3';
  readonly location: S3Location;
  private readonly client: S3Client;

  constructor(location: S3Location) {
    this.location = location;
    this.client = new S3Client({
      // An S3-compatible server without a region of its own takes AWS's default name.
      region: location.region ?? (location.endpoint ? 'us-east-1' : undefined),
      endpoint: location.endpoint,
      forcePathStyle: location.pathStyle,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async presignPut(grant: UploadGrant, now: Date): Promise<PresignedPut> {
    const checksum = hexToBase64(grant.sha256);
    const command = new PutObjectCommand({
      Bucket: this.location.bucket,
      Key: grant.objectKey,
      ContentLength: grant.size,
      ChecksumSHA256: checksum,
    });
    const url = await getSignedUrl(this.client, command, {
      signingDate: now,
      expiresIn: grant.expires - Math.floor(now.getTime() / 1000),
      // A header, not a query parameter: S3 then checks the body against it. Signed, so the
      // client cannot send another one.
      unhoistableHeaders: new Set([CHECKSUM_HEADER]),
      signableHeaders: new Set(['content-length', CHECKSUM_HEADER]),
    });
    return { url, headers: { 'content-type': 'application/octet-stream', [CHECKSUM_HEADER]: checksum } };
  }

  async downloadUrl(
    key: string,
    options: { filename: string; contentType: string; expiresInSeconds: number; now: Date },
  ): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.location.bucket,
      Key: key,
      ResponseContentDisposition: `attachment; filename="${options.filename}"`,
      ResponseContentType: options.contentType,
    });
    return getSignedUrl(this.client, command, { signingDate: options.now, expiresIn: options.expiresInSeconds });
  }

  /** HeadBucket: the endpoint answers, the credentials are accepted and the bucket exists. */
  async ready(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.location.bucket }), {
        abortSignal: AbortSignal.timeout(READY_TIMEOUT_MS),
      });
    } catch (error) {
      const status = error instanceof S3ServiceException ? ` (HTTP ${error.$metadata.httpStatusCode})` : '';
      throw new Error(`bucket ${this.location.bucket}: ${(error as Error).name}${status}`, { cause: error });
    }
  }

  /**
   * Used by `guard-server import` (agents PUT through presigned URLs). The body is counted and
   * hashed on its way, and S3 checks the signed SHA-256 too; should an S3-compatible server
   * keep a body that does not match, the object is deleted before put throws.
   */
  async put(key: string, body: AsyncIterable<Buffer>, expect: ObjectExpectation): Promise<void> {
    const check = new LengthAndDigest(expect);
    const counted = Readable.from(
      (async function* () {
        for await (const chunk of body) {
          check.update(chunk);
          yield chunk;
        }
      })(),
    );
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.location.bucket,
          Key: key,
          Body: counted,
          ContentLength: expect.size,
          ChecksumSHA256: hexToBase64(expect.sha256),
          ContentType: 'application/octet-stream',
        }),
      );
    } catch (error) {
      if (error instanceof ObjectMismatchError) throw error;
      if (error instanceof S3ServiceException && ['BadDigest', 'XAmzContentChecksumMismatch'].includes(error.name))
        throw new ObjectMismatchError('sha256_mismatch', 'the body does not match the presigned SHA-256');
      throw error;
    }
    try {
      check.verifyComplete();
    } catch (error) {
      await this.delete(key);
      throw error;
    }
  }

  /**
   * HeadObject with ChecksumMode ENABLED: the size and the SHA-256 S3 checked when the object
   * was PUT. A server that keeps no such checksum (or a multipart object, whose checksum is a
   * checksum of parts) is answered by reading and hashing the object.
   */
  async verify(key: string): Promise<ObjectExpectation | undefined> {
    let head: HeadObjectCommandOutput;
    try {
      head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.location.bucket, Key: key, ChecksumMode: 'ENABLED' }),
      );
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const checksum = head.ChecksumSHA256;
    if (checksum && !checksum.includes('-') && head.ChecksumType !== 'COMPOSITE' && head.ContentLength !== undefined)
      return { size: head.ContentLength, sha256: base64ToHex(checksum) };
    const object = await this.open(key);
    if (!object) return undefined;
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of object.body) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return { size, sha256: hash.digest('hex') };
  }

  async open(key: string): Promise<{ size: number; body: Readable } | undefined> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: key }));
      return { size: object.ContentLength ?? 0, body: object.Body as Readable };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: key }));
  }

  /** A single PUT leaves no partial object in S3 (a lifecycle rule aborts stray multipart uploads). */
  async sweepPartials(): Promise<number> {
    return 0;
  }

  close(): void {
    this.client.destroy();
  }
}
