// Counting and hashing a body on its way into a store, refusing it as soon as it is longer than
// expected: both stores check a put this way (S3 checks it again on its side).

import { createHash } from 'node:crypto';
import { type ObjectExpectation, ObjectMismatchError } from './store.ts';

/** Counts and hashes a body; refuses it as soon as it is longer than expected. */
export class LengthAndDigest {
  private readonly hash = createHash('sha256');
  private bytes = 0;
  private readonly expect: ObjectExpectation;
  constructor(expect: ObjectExpectation) {
    this.expect = expect;
  }
  update(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > this.expect.size)
      throw new ObjectMismatchError('too_long', `the body is longer than the presigned ${this.expect.size} bytes`);
    this.hash.update(chunk);
  }
  /** Throws unless the body was exactly as expected; returns its SHA-256 (hex). */
  verifyComplete(): string {
    if (this.bytes < this.expect.size)
      throw new ObjectMismatchError(
        'too_short',
        `the body has ${this.bytes} of the presigned ${this.expect.size} bytes`,
      );
    const digest = this.hash.digest('hex');
    if (digest !== this.expect.sha256)
      throw new ObjectMismatchError('sha256_mismatch', 'the body does not match the presigned SHA-256');
    return digest;
  }
}
