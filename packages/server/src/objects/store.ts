// One interface for object storage, two implementations: the embedded filesystem store (its
// presigned PUTs are served by guard-server itself, routes.ts) and an S3-compatible bucket
// (agents PUT to S3 directly through S3's own presigned URLs). The contract every store keeps:
// an object becomes visible only whole, after its exact length and SHA-256 were checked; a
// failed put leaves nothing.

import type { Readable } from 'node:stream';

export interface ObjectExpectation {
  size: number;
  sha256: string;
}

export class ObjectMismatchError extends Error {
  readonly reason: 'too_short' | 'too_long' | 'sha256_mismatch';
  constructor(reason: ObjectMismatchError['reason'], message: string) {
    super(message);
    this.reason = reason;
  }
}

/** What one presigned upload grants: one object of one tenant, exact size and SHA-256, until `expires`. */
export interface UploadGrant {
  objectKey: string;
  tenantId: string;
  size: number;
  /** Lowercase hex. */
  sha256: string;
  /** Unix seconds. */
  expires: number;
}

/** The presign response's `url` and `headers` (DESIGN §4): the agent sends the headers verbatim. */
export interface PresignedPut {
  url: string;
  headers: Record<string, string>;
}

export interface ObjectStore {
  /** `fs`: guard-server receives the PUT (routes.ts); `s3`: the agent PUTs to the bucket. */
  readonly kind: 'fs' | 's3';
  /** A URL (and the headers it needs) that accepts exactly the granted object until it expires. */
  presignPut(grant: UploadGrant, now: Date): Promise<PresignedPut>;
  /**
   * A short-lived URL that downloads the object straight from the store, or undefined when
   * guard-server streams it itself (the filesystem store).
   */
  downloadUrl(
    key: string,
    options: { filename: string; contentType: string; expiresInSeconds: number; now: Date },
  ): Promise<string | undefined>;
  /** Throws, saying why, unless the store can be reached and written (readiness). */
  ready(): Promise<void>;
  /**
   * Streams `body` into `key`, publishing it only if it is exactly `expect`. When it throws,
   * nothing of the put remains (no object, no partial file).
   */
  put(key: string, body: AsyncIterable<Buffer>, expect: ObjectExpectation): Promise<void>;
  /**
   * Size and SHA-256 of a stored object, computed from its bytes: the digest taken while the
   * bytes arrived, as long as the object is unchanged since (S3: the object's stored
   * ChecksumSHA256), or else a new read of the object. Undefined if absent.
   */
  verify(key: string): Promise<ObjectExpectation | undefined>;
  open(key: string): Promise<{ size: number; body: Readable } | undefined>;
  delete(key: string): Promise<void>;
  /** Removes leftovers of puts that never finished (a crash mid-upload). */
  sweepPartials(): Promise<number>;
  /** Releases connections (S3); the store is not used after. */
  close(): void;
}
