// One interface for object storage; the embedded filesystem store implements it now, an S3
// store later. The contract every store keeps: an object becomes visible only whole, after
// its exact length and SHA-256 were checked; a failed put leaves nothing.

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

export interface ObjectStore {
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
}
