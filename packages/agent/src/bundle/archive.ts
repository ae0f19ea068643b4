// The archive writer: tar (tar-stream) → zstd (node:zlib) → file, one pass, bounded memory.
// It records the size and SHA-256 of every member as stored, for the manifest, and the
// size and SHA-256 of the bundle file itself.

import { createHash, type Hash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createZstdCompress } from 'node:zlib';
import type { ManifestMember } from '@guard/contract/manifest';
import tar from 'tar-stream';
import { BUNDLE_FILE_MODE } from './output.ts';

/** 1 MiB zlib chunks: 1.3–3× the default's throughput (DESIGN §9). */
export const ZLIB_CHUNK_BYTES = 1 << 20;
export const ZSTD_LEVEL = 3;
const MEMBER_MODE = 0o640;

/** Passes bytes through while hashing and counting them. */
export class HashTap extends Transform {
  readonly hash: Hash = createHash('sha256');
  bytes = 0;
  private readonly onBytes: ((n: number) => void) | undefined;
  constructor(onBytes?: (n: number) => void) {
    super({ highWaterMark: ZLIB_CHUNK_BYTES });
    this.onBytes = onBytes;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    this.onBytes?.(chunk.length);
    done(null, chunk);
  }
}

export class ArchiveWriter {
  private readonly pack = tar.pack();
  private readonly fileTap = new HashTap();
  private readonly written: Promise<void>;
  private readonly mtime: Date;
  private readonly onMemberBytes: ((bytes: number) => void) | undefined;

  /** `onMemberBytes` is told of every byte of a streamed member as it is archived (progress). */
  constructor(path: string, mtime: Date, onMemberBytes?: (bytes: number) => void) {
    this.mtime = mtime;
    this.onMemberBytes = onMemberBytes;
    const zstd = createZstdCompress({
      chunkSize: ZLIB_CHUNK_BYTES,
      params: {
        [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL,
        [constants.ZSTD_c_checksumFlag]: 1,
      },
    });
    // 'wx': the temp file is ours alone; flush: fsync before close, so a published bundle is on disk.
    const file = createWriteStream(path, { flags: 'wx', mode: BUNDLE_FILE_MODE, flush: true });
    this.written = pipeline(this.pack as unknown as Readable, zstd, this.fileTap, file);
    this.written.catch(() => {}); // surfaced by finish(); never an unhandled rejection
  }

  async addBuffer(name: string, bytes: Buffer): Promise<ManifestMember> {
    await new Promise<void>((resolve, reject) => {
      this.pack.entry(memberHeader(name, bytes.length, this.mtime), bytes, (error) =>
        error ? reject(error) : resolve(),
      );
    });
    return { name, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  }

  /** Streams exactly `size` bytes from `source` into a member; a short or long source fails. */
  async addStream(name: string, size: number, source: Readable): Promise<ManifestMember> {
    const tap = new HashTap(this.onMemberBytes);
    let entryDone!: Promise<void>;
    const entry = await new Promise<NodeJS.WritableStream>((resolve) => {
      entryDone = new Promise<void>((ok, fail) => {
        resolve(this.pack.entry(memberHeader(name, size, this.mtime), (error) => (error ? fail(error) : ok())));
      });
    });
    await Promise.all([pipeline(source, tap, entry), entryDone]);
    if (tap.bytes !== size) throw new Error(`${name} changed while it was archived (${tap.bytes} of ${size} bytes)`);
    return { name, size, sha256: tap.hash.digest('hex') };
  }

  /** Closes the archive; resolves with the bundle file's size and SHA-256 once it is on disk. */
  async finish(): Promise<{ size: number; sha256: string }> {
    this.pack.finalize();
    await this.written;
    return { size: this.fileTap.bytes, sha256: this.fileTap.hash.digest('hex') };
  }

  /** Aborts the pipeline (the temp file is removed with the work directory). */
  destroy(error: Error): void {
    this.pack.destroy(error);
  }
}

/** The tar header of every member: a plain file owned by root, mode 0640. */
export function memberHeader(name: string, size: number, mtime: Date): tar.Header {
  return {
    name,
    size,
    mode: MEMBER_MODE,
    mtime,
    type: 'file',
    uname: 'root',
    gname: 'root',
    uid: 0,
    gid: 0,
    linkname: '',
    devmajor: 0,
    devminor: 0,
  };
}
