// Reads a file front to back through a few reused buffers, so that reading 1 GiB allocates
// nothing per chunk: fresh 1 MiB buffers would each be external memory for V8, and with the
// launcher's small heap every ~16 MiB of them triggers a full GC (measured: ~0.3 s per GiB,
// plus page faults). Used by upload's local check and by its PUT.

import type { FileHandle } from 'node:fs/promises';

export interface ChunkReadOptions {
  /** Size of each buffer (and so the largest chunk). */
  chunkBytes: number;
  /** How many chunks may be in flight (handed to `consume` and not yet released). */
  buffers: number;
  /** Read at most this many bytes (default: to the end of the file). */
  limit?: number;
  /** Turns an error of the file read itself into the error to throw (default: as it is). */
  readError?: (error: unknown) => unknown;
}

/**
 * Reads `handle` from offset 0 and calls `consume` with each chunk, in file order. The chunk's
 * memory is reused once the promise `consume` returned has settled, so `consume` must copy
 * or finish with it by then (hashing it synchronously, or resolving when a stream or socket
 * has taken it). The next chunk is read while earlier ones are still being consumed. Returns
 * the number of bytes read; throws the first error of a read or of a `consume`.
 */
export async function readChunks(
  handle: FileHandle,
  options: ChunkReadOptions,
  consume: (chunk: Buffer) => Promise<void> | void,
): Promise<number> {
  const { chunkBytes, buffers, limit = Number.POSITIVE_INFINITY } = options;
  const pool = Array.from({ length: buffers }, () => Buffer.allocUnsafeSlow(chunkBytes));
  const released: Promise<void>[] = [];
  /** The first failure of a `consume` (the first element, if any). */
  const failures: unknown[] = [];
  let total = 0;
  for (let i = 0; ; i++) {
    const slot = i % buffers;
    await released[slot];
    if (failures.length > 0) throw failures[0];
    const want = Math.min(chunkBytes, limit - total);
    if (want <= 0) break;
    let bytesRead: number;
    try {
      ({ bytesRead } = await handle.read(pool[slot], 0, want, total));
    } catch (error) {
      // Chunks still in flight are not waited for (a stalled socket would hold this error back);
      // their buffers are never reused, so they finish or fail on their own.
      throw options.readError ? options.readError(error) : error;
    }
    if (bytesRead === 0) break;
    total += bytesRead;
    const consumed = Promise.resolve(consume(pool[slot].subarray(0, bytesRead)));
    released[slot] = consumed.then(
      () => {},
      (error) => {
        failures.push(error);
      },
    );
  }
  await Promise.all(released);
  if (failures.length > 0) throw failures[0];
  return total;
}
