// Embedded object store: files under <data_dir>/objects. A put streams into
// objects/.partial/<random>, hashing and counting on the way; only a body of exactly the
// expected size and SHA-256 is fsynced and renamed into place. After a crash mid-put only the
// partial file remains, and sweepPartials removes it at the next start.
//
// The digest computed on the way in is kept in objects/.meta/<key>.json with the file's
// identity (inode, size, mtime), like the checksum S3 keeps with an object: verify() answers
// from it while the file is the one that was hashed, and reads and hashes the file otherwise.

import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type ObjectExpectation, ObjectMismatchError, type ObjectStore } from './store.ts';

const PARTIAL_DIR = '.partial';
const META_DIR = '.meta';
const CHUNK_BYTES = 1 << 20;

/** Object keys are ours (server-generated), but are still checked before touching a path. */
const KEY_PATTERN = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_.-]+)*$/;

export class FsObjectStore implements ObjectStore {
  private readonly root: string;
  constructor(root: string) {
    this.root = resolve(root);
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

  async put(key: string, body: Readable, expect: ObjectExpectation): Promise<void> {
    const target = this.path(key);
    const partial = join(this.root, PARTIAL_DIR, randomBytes(12).toString('hex'));
    const check = new LengthAndDigest(expect);
    try {
      await pipeline(body, check, createWriteStream(partial, { flags: 'wx', mode: 0o600, flush: true }));
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
  async hash(path: string): Promise<ObjectExpectation | undefined> {
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

/** Fails the stream as soon as the body is longer than expected; checks length and digest at the end. */
class LengthAndDigest extends Transform {
  private readonly hash = createHash('sha256');
  private bytes = 0;
  private readonly expect: ObjectExpectation;
  constructor(expect: ObjectExpectation) {
    super({ highWaterMark: CHUNK_BYTES });
    this.expect = expect;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.expect.size) {
      done(new ObjectMismatchError('too_long', `the body is longer than the presigned ${this.expect.size} bytes`));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
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
