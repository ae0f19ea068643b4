// Embedded object store: files under <data_dir>/objects. A put streams into
// objects/.partial/<random>, hashing and counting on the way; only a body of exactly the
// expected size and SHA-256 is fsynced and renamed into place. After a crash mid-put only the
// partial file remains, and sweepPartials removes it at the next start; a put that fails in any
// other way (a refused body, a peer that hung up or went idle) removes its partial file itself
// before it throws.
//
// The digest computed on the way in is kept in objects/.meta/<key>.json with the file's
// identity (inode, size, mtime), like the checksum S3 keeps with an object: verify() answers
// from it while the file is the one that was hashed, and reads and hashes the file otherwise.

import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, constants, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { LengthAndDigest } from './length-and-digest.ts';
import { presignedUrl } from './presign.ts';
import type { ObjectExpectation, ObjectStore, PresignedPut, UploadGrant } from './store.ts';

const PARTIAL_DIR = '.partial';
const META_DIR = '.meta';
const CHUNK_BYTES = 1 << 20;

/** Object keys are ours (server-generated), but are still checked before touching a path. */
const KEY_PATTERN = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_.-]+)*$/;

export interface FsPresigning {
  /** HMAC key of the presigned URLs (presign.ts), derived from the master key. */
  key: Buffer;
  /** Base of the presigned URLs: --public-url, or the address listened on. */
  publicUrl: () => string;
}

export class FsObjectStore implements ObjectStore {
  readonly kind = 'fs';
  private readonly root: string;
  private readonly presigning: FsPresigning;
  constructor(root: string, presigning: FsPresigning) {
    this.root = resolve(root);
    this.presigning = presigning;
  }

  /** guard-server's own presigned PUT (routes.ts checks it); the grant is in the signed query. */
  async presignPut(grant: UploadGrant): Promise<PresignedPut> {
    const url = presignedUrl(this.presigning.publicUrl(), this.presigning.key, { method: 'PUT', ...grant });
    return { url, headers: { 'content-type': 'application/octet-stream' } };
  }

  /** Downloads are streamed by guard-server (the bundle download route). */
  async downloadUrl(): Promise<undefined> {
    return undefined;
  }

  /** The objects directory is there and writable. */
  async ready(): Promise<void> {
    await access(join(this.root, PARTIAL_DIR), constants.W_OK);
  }

  async init(): Promise<void> {
    await mkdir(join(this.root, PARTIAL_DIR), { recursive: true, mode: 0o700 });
  }

  private path(key: string): string {
    if (!KEY_PATTERN.test(key) || key.split('/').some((p) => p === '.' || p === '..' || p.startsWith('.')))
      throw new Error(`invalid object key ${JSON.stringify(key)}`);
    const p = resolve(this.root, key);
    if (!p.startsWith(this.root + sep)) throw new Error('object key escapes the store');
    return p;
  }

  async put(key: string, body: AsyncIterable<Buffer>, expect: ObjectExpectation): Promise<void> {
    const target = this.path(key);
    const partial = join(this.root, PARTIAL_DIR, randomBytes(12).toString('hex'));
    const check = new LengthAndDigest(expect);
    try {
      await writeBody(body, check, partial);
      const digest = check.verifyComplete();
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      // Meta first: a published object always has it (a meta left without its object, by a
      // crash in between, is ignored and overwritten).
      const { ino, size, mtimeMs } = await stat(partial);
      const meta: StoredMeta = { size, sha256: digest, ino, mtimeMs };
      const metaPath = this.metaPath(key);
      await mkdir(dirname(metaPath), { recursive: true, mode: 0o700 });
      await writeFile(metaPath, JSON.stringify(meta), { mode: 0o600 });
      await rename(partial, target);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  async verify(key: string): Promise<ObjectExpectation | undefined> {
    const path = this.path(key);
    let file: Awaited<ReturnType<typeof stat>>;
    try {
      file = await stat(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const meta = await readFile(this.metaPath(key), 'utf8').then(
      (text) => JSON.parse(text) as StoredMeta,
      () => undefined,
    );
    if (meta && meta.ino === file.ino && meta.size === file.size && meta.mtimeMs === file.mtimeMs)
      return { size: meta.size, sha256: meta.sha256 };
    return this.hash(path);
  }

  /** Size and SHA-256 read from the bytes on disk; undefined if the file is gone. */
  private async hash(path: string): Promise<ObjectExpectation | undefined> {
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES })) {
        hash.update(chunk as Buffer);
        size += (chunk as Buffer).length;
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return { size, sha256: hash.digest('hex') };
  }

  private metaPath(key: string): string {
    this.path(key); // validates the key
    return join(this.root, META_DIR, `${key}.json`);
  }

  async open(key: string): Promise<{ size: number; body: Readable } | undefined> {
    let file: Awaited<ReturnType<typeof open>>;
    try {
      file = await open(this.path(key), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const { size } = await file.stat();
    return { size, body: file.createReadStream({ highWaterMark: CHUNK_BYTES }) };
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
    await rm(this.metaPath(key), { force: true });
  }

  async sweepPartials(): Promise<number> {
    const dir = join(this.root, PARTIAL_DIR);
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) await rm(join(dir, name), { force: true });
    return names.length;
  }

  close(): void {}

  /** For tests and diagnostics: whether a key has an object. */
  async exists(key: string): Promise<boolean> {
    return stat(this.path(key)).then(
      () => true,
      () => false,
    );
  }
}

/** The digest a put computed, and the identity of the file it was computed over. */
interface StoredMeta {
  size: number;
  sha256: string;
  ino: number;
  mtimeMs: number;
}

/**
 * Streams the body into a new file at `path` (created 0600, fsynced). Each socket chunk is
 * counted, hashed and copied into one of two 1 MiB buffers at once, so it dies young: held
 * across a file write, 64 KiB chunks outlive V8's young generation and are freed only by
 * full collections (60 a GiB, a third of the server's CPU for an upload). Writes go out
 * 1 MiB at a time while the next buffer fills.
 */
async function writeBody(body: AsyncIterable<Buffer>, check: LengthAndDigest, path: string): Promise<void> {
  const file = await open(path, 'wx', 0o600);
  try {
    let filling = Buffer.allocUnsafeSlow(CHUNK_BYTES);
    let writing = Buffer.allocUnsafeSlow(CHUNK_BYTES);
    let used = 0;
    let inFlight: Promise<void> = Promise.resolve();
    const writeAll = async (buffer: Buffer, length: number) => {
      for (let done = 0; done < length; ) done += (await file.write(buffer, done, length - done)).bytesWritten;
    };
    for await (const chunk of body) {
      check.update(chunk);
      for (let offset = 0; offset < chunk.length; ) {
        const n = chunk.copy(filling, used, offset);
        used += n;
        offset += n;
        if (used === filling.length) {
          await inFlight;
          inFlight = writeAll(filling, used);
          inFlight.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
          [filling, writing] = [writing, filling];
          used = 0;
        }
      }
    }
    await inFlight;
    if (used > 0) await writeAll(filling, used);
    await file.sync();
  } finally {
    await file.close();
  }
}
