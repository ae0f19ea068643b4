// Reads a bundle back, streaming: file → zstd → tar → per-member size and SHA-256, plus the
// parsed manifest. `verifyBundle` checks every member against the manifest (present, size,
// SHA-256, no extra member), which `upload` does before any network call (DESIGN §3).
//
// The file is read through a few reused buffers (file-chunks.ts); zstd decompresses on libuv's
// thread pool while this thread parses tar and hashes members (and, for upload, the file).

import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createZstdDecompress } from 'node:zlib';
import { MANIFEST_MEMBER } from '@guard/contract/bundle';
import type { BundleManifest, ManifestMember } from '@guard/contract/manifest';
import tar from 'tar-stream';
import { AgentError, describeSystemError } from '../errors.ts';
import { readChunks } from '../file-chunks.ts';
import { ZLIB_CHUNK_BYTES } from './archive.ts';

/** The manifest is small JSON; anything bigger is not one of ours. */
const MANIFEST_MAX_BYTES = 1024 * 1024;

export interface BundleListing {
  manifest: BundleManifest | undefined;
  members: ManifestMember[];
}

/** Compressed bytes in flight: three 1 MiB buffers (one being read, two with zstd). */
const READ_BUFFERS = 3;
/** Every zstd frame starts with these four bytes (RFC 8878 §3.1.1, 0xFD2FB528 little-endian). */
const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

/** The file is not a zstd-compressed tar archive at all (as opposed to a damaged one). */
export class NotABundleError extends Error {
  constructor() {
    super('not a zstd-compressed tar archive');
    this.name = 'NotABundleError';
  }
}

/**
 * Sees every raw byte of the file as it is read, in order (upload hashes the whole file in the
 * same pass, so the bytes it hashes are the bytes checked). The chunk is valid only during the
 * call: its buffer is reused.
 */
export type RawTap = (chunk: Buffer) => void;

/** Lists a bundle's members with their stored size and SHA-256; throws on a corrupt archive. */
export async function readBundle(path: string, tap?: RawTap): Promise<BundleListing> {
  const members: ManifestMember[] = [];
  let manifestText: string | undefined;
  let entries = 0;
  let notZstd = false;
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    entries++;
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let size = 0;
    const isManifest = header.name === MANIFEST_MEMBER;
    stream.on('data', (data: unknown) => {
      const chunk = data as Buffer;
      hash.update(chunk);
      size += chunk.length;
      if (isManifest && size <= MANIFEST_MAX_BYTES) chunks.push(chunk);
    });
    stream.on('end', () => {
      if (isManifest) {
        if (size > MANIFEST_MAX_BYTES)
          return next(new Error(`${MANIFEST_MEMBER} is larger than ${MANIFEST_MAX_BYTES} bytes`));
        manifestText = Buffer.concat(chunks).toString('utf8');
      } else {
        members.push({ name: header.name, size, sha256: hash.digest('hex') });
      }
      next();
    });
    stream.on('error', next);
  });
  const handle = await open(path, 'r');
  try {
    const zstd = createZstdDecompress({ chunkSize: ZLIB_CHUNK_BYTES });
    const extracted = pipeline(zstd, extract as unknown as Writable);
    // A zstd stream that fails drops the callback of the write in progress: stop waiting then.
    const closed = new Promise<never>((_, fail) => zstd.once('close', () => fail(new Error('zstd stream closed'))));
    closed.catch(() => {});
    let first = true;
    const fed = readChunks(handle, { chunkBytes: ZLIB_CHUNK_BYTES, buffers: READ_BUFFERS }, (chunk) => {
      if (first) {
        first = false;
        // The first read is a whole chunk, or the whole file when it is shorter.
        if (!chunk.subarray(0, ZSTD_MAGIC.length).equals(ZSTD_MAGIC)) {
          notZstd = true;
          throw new NotABundleError();
        }
      }
      tap?.(chunk);
      // The write callback runs once zstd has consumed the chunk: its buffer may then be reused.
      const written = new Promise<void>((ok, fail) => zstd.write(chunk, (error) => (error ? fail(error) : ok())));
      return Promise.race([written, closed]);
    }).then(
      () => {
        zstd.end();
      },
      (error) => {
        zstd.destroy(error);
        throw error;
      },
    );
    const [feeding, extracting] = await Promise.allSettled([fed, extracted]);
    if (notZstd) throw new NotABundleError();
    // A corrupt archive fails zstd or tar (and then the feeding, with a less telling error).
    if (extracting.status === 'rejected') {
      // zstd data that holds no tar entry at all is some other zstd file, not a damaged bundle.
      if (entries === 0 && (extracting.reason as NodeJS.ErrnoException).code === undefined) throw new NotABundleError();
      throw extracting.reason;
    }
    if (feeding.status === 'rejected') throw feeding.reason;
  } finally {
    await handle.close();
  }
  let manifest: BundleManifest | undefined;
  if (manifestText !== undefined) {
    // Loaded here, not with this module: its schema checker (~5 MiB of RSS) is upload's, not collect's.
    const { parseManifest } = await import('@guard/contract/manifest');
    manifest = parseManifest(JSON.parse(manifestText));
  }
  return { manifest, members };
}

/** Verifies a bundle against its manifest; returns the manifest or throws an AgentError. */
export async function verifyBundle(path: string, tap?: RawTap): Promise<BundleManifest> {
  let listing: BundleListing;
  try {
    listing = await readBundle(path, tap);
  } catch (error) {
    if (error instanceof NotABundleError)
      throw new AgentError('bundle', `${path} is not a Guard bundle (${error.message})`, { cause: error });
    const reason = (error as NodeJS.ErrnoException).code?.startsWith('E')
      ? describeSystemError(error)
      : (error as Error).message;
    throw new AgentError('bundle', `${path} is not a readable bundle: ${reason}`, { cause: error });
  }
  const { manifest, members } = listing;
  if (!manifest) throw new AgentError('bundle', `${path} has no ${MANIFEST_MEMBER}`);
  const stored = new Map(members.map((m) => [m.name, m]));
  for (const want of manifest.contents) {
    const got = stored.get(want.name);
    if (!got) throw new AgentError('bundle', `${path}: member ${want.name} listed in the manifest is missing`);
    if (got.size !== want.size)
      throw new AgentError(
        'bundle',
        `${path}: member ${want.name} is ${got.size} bytes, the manifest says ${want.size}`,
      );
    if (got.sha256 !== want.sha256)
      throw new AgentError('bundle', `${path}: member ${want.name} does not match its SHA-256 in the manifest`);
    stored.delete(want.name);
  }
  const extra = [...stored.keys()];
  if (extra.length > 0) throw new AgentError('bundle', `${path}: member ${extra[0]} is not listed in the manifest`);
  return manifest;
}
