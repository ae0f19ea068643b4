// Reading a rotated segment as a sequence of gzip members (RFC 1952), streaming.
//
// Node's gunzip hides what a segment holds besides its compressed text: it skips the
// header's FNAME, FCOMMENT and FEXTRA fields, and it silently stops at a zero byte after a
// member, ignoring everything after it. A segment copied byte for byte on the strength of
// such a scan could carry `api_key=…` in a header field or in plain text after padding. So
// collect frames the members itself: it parses every header, inflates each member's deflate
// data with a raw inflater (whose bytesWritten says where the data ended), and checks each
// trailer's CRC32 and ISIZE. What it reports decides whether the segment may be copied as
// it is (framing.byteCopyable) or must be rebuilt from its content.
//
// Bytes after the last member: zero bytes are padding (gzip(1) ignores them too) and the
// segment is rebuilt without them; anything else fails the read, so the segment is left out
// (it cannot be redacted as a log: it is not gzip data).

import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { crc32, createInflateRaw, type InflateRaw, constants as zlibConstants } from 'node:zlib';

const ID1 = 0x1f;
const ID2 = 0x8b;
const CM_DEFLATE = 8;
const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;
const FRESERVED = 0xe0;
/** Header fields that can hold text outside the compressed data. */
const TEXT_FIELDS = FEXTRA | FNAME | FCOMMENT;
const HEADER_READ_BYTES = 64 * 1024;
const EMPTY: Buffer = Buffer.alloc(0);

/** What the segment held besides its members' content; filled in while it is read. */
export interface GzipFraming {
  members: number;
  /** Some member's header carries FEXTRA, FNAME or FCOMMENT. */
  headerFields: boolean;
  /** Zero bytes after the last member. */
  paddingBytes: number;
}

export function newFraming(): GzipFraming {
  return { members: 0, headerFields: false, paddingBytes: 0 };
}

/** Whether the file is nothing but members without text-bearing header fields (once read whole). */
export function byteCopyable(framing: GzipFraming): boolean {
  return framing.members > 0 && !framing.headerFields && framing.paddingBytes === 0;
}

/** The file is not (only) well-formed gzip members. */
export class GzipFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GzipFormatError';
  }
}

export interface GunzipOptions {
  /** Bytes per read and per inflater output chunk. */
  chunkBytes: number;
  /** Called with the number of new bytes of the file read (each byte counted once). */
  onRead?: (bytes: number) => void;
}

/**
 * The decompressed content of every member of file[0, size), as one byte stream; fills in
 * `framing` as it goes. Fails with GzipFormatError (or zlib's error for bad deflate data)
 * when the file is anything but members and zero padding.
 */
export function gunzipMembers(file: FileHandle, size: number, framing: GzipFraming, options: GunzipOptions): Readable {
  return Readable.from(readMembers(file, size, framing, options), {
    objectMode: false,
    highWaterMark: options.chunkBytes,
  });
}

async function* readMembers(
  file: FileHandle,
  size: number,
  framing: GzipFraming,
  options: GunzipOptions,
): AsyncGenerator<Buffer> {
  let counted = 0;
  const reached = (offset: number) => {
    if (offset > counted) {
      options.onRead?.(offset - counted);
      counted = offset;
    }
  };
  if (size === 0) throw new GzipFormatError('empty file: not a gzip stream');
  let pos = 0;
  while (pos < size) {
    if (framing.members > 0 && !(await startsMember(file, pos, size))) {
      await expectPadding(file, pos, size, options.chunkBytes, reached);
      framing.paddingBytes = size - pos;
      return;
    }
    const header = await readHeader(file, pos, size, framing.members);
    if (header.textFields) framing.headerFields = true;
    pos = header.end;
    reached(pos);
    const member = { crc: 0, length: 0 };
    const inflater = createInflateRaw({ chunkSize: Math.max(zlibConstants.Z_MIN_CHUNK, options.chunkBytes) });
    const feeding = feed(inflater, file, pos, size, options.chunkBytes, reached);
    feeding.catch(() => {}); // its failure also fails the inflater, which throws below
    try {
      for await (const out of inflater as AsyncIterable<Buffer>) {
        member.crc = crc32(out, member.crc);
        member.length += out.length;
        yield out;
      }
      await feeding;
    } finally {
      inflater.destroy();
    }
    pos += inflater.bytesWritten;
    const trailer = await readAt(file, pos, Math.min(8, size - pos));
    if (trailer.length < 8)
      throw new GzipFormatError(`truncated: member ${framing.members + 1} ends without its CRC32 and size`);
    if (trailer.readUInt32LE(0) !== member.crc)
      throw new GzipFormatError(`member ${framing.members + 1}: CRC32 does not match its content`);
    if (trailer.readUInt32LE(4) !== member.length % 2 ** 32)
      throw new GzipFormatError(`member ${framing.members + 1}: size does not match its content`);
    pos += 8;
    reached(pos);
    framing.members++;
  }
}

/**
 * Writes file[from, size) into the inflater one chunk at a time (the next read overlapping
 * the current inflate), until the deflate data ends: then the inflater has taken fewer bytes
 * than it was given, and its bytesWritten is the length of the data.
 */
async function feed(
  inflater: InflateRaw,
  file: FileHandle,
  from: number,
  size: number,
  chunkBytes: number,
  reached: (offset: number) => void,
): Promise<void> {
  let fed = 0;
  let next = readAt(file, from, Math.min(chunkBytes, size - from));
  try {
    while (!inflater.destroyed) {
      const chunk = await next;
      if (chunk.length === 0) break;
      fed += chunk.length;
      next = readAt(file, from + fed, Math.min(chunkBytes, size - from - fed));
      await new Promise<void>((ok, fail) => {
        const closed = () => ok();
        inflater.once('close', closed);
        inflater.write(chunk, (error) => {
          inflater.off('close', closed);
          if (error) fail(error);
          else ok();
        });
      });
      reached(from + Math.min(fed, inflater.bytesWritten));
      if (inflater.bytesWritten < fed) break;
    }
  } finally {
    await next.catch(() => {});
  }
  // Ends the data when the file ran out first: the inflater then fails as truncated.
  if (!inflater.destroyed) inflater.end();
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  if (length <= 0) return EMPTY;
  const buffer = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await file.read(buffer, got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got === length ? buffer : buffer.subarray(0, got);
}

async function startsMember(file: FileHandle, pos: number, size: number): Promise<boolean> {
  const magic = await readAt(file, pos, Math.min(2, size - pos));
  return magic.length === 2 && magic[0] === ID1 && magic[1] === ID2;
}

/** Accepts file[from, size) only if every byte is zero (padding); reads in chunks. */
async function expectPadding(
  file: FileHandle,
  from: number,
  size: number,
  chunkBytes: number,
  reached: (offset: number) => void,
): Promise<void> {
  for (let at = from; at < size; ) {
    const chunk = await readAt(file, at, Math.min(chunkBytes, size - at));
    if (chunk.length === 0) break;
    if (chunk.some((b) => b !== 0))
      throw new GzipFormatError(
        `${size - from} bytes after the last gzip member (at offset ${from}) are not gzip data; ` +
          'only zero padding may follow it',
      );
    at += chunk.length;
    reached(at);
  }
}

/** Reads the header at `pos`; returns where the deflate data starts. */
async function readHeader(
  file: FileHandle,
  pos: number,
  size: number,
  index: number,
): Promise<{ end: number; textFields: boolean }> {
  const what = `member ${index + 1}`;
  const cursor = new HeaderCursor(file, pos, size, what);
  const fixed = await cursor.take(10);
  if (fixed[0] !== ID1 || fixed[1] !== ID2)
    throw new GzipFormatError(index === 0 ? 'not a gzip file' : `${what}: not a gzip header`);
  if (fixed[2] !== CM_DEFLATE) throw new GzipFormatError(`${what}: unknown compression method ${fixed[2]}`);
  const flags = fixed[3];
  if (flags & FRESERVED) throw new GzipFormatError(`${what}: reserved header flags are set`);
  if (flags & FEXTRA) {
    const xlen = (await cursor.take(2)).readUInt16LE(0);
    await cursor.take(xlen);
  }
  if (flags & FNAME) await cursor.skipPastNul();
  if (flags & FCOMMENT) await cursor.skipPastNul();
  if (flags & FHCRC) {
    const expected = cursor.crc & 0xffff;
    if ((await cursor.take(2)).readUInt16LE(0) !== expected)
      throw new GzipFormatError(`${what}: header CRC does not match`);
  }
  return { end: cursor.pos, textFields: (flags & TEXT_FIELDS) !== 0 };
}

/** Reads a header forward in 64 KiB windows, keeping the CRC32 of what it has taken. */
class HeaderCursor {
  pos: number;
  crc = 0;
  private window: Buffer = EMPTY;
  private windowStart: number;
  private readonly file: FileHandle;
  private readonly size: number;
  private readonly what: string;

  constructor(file: FileHandle, pos: number, size: number, what: string) {
    this.file = file;
    this.pos = pos;
    this.windowStart = pos;
    this.size = size;
    this.what = what;
  }

  async take(n: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    let left = n;
    while (left > 0) {
      const available = await this.available();
      const part = available.subarray(0, left);
      this.consume(part);
      parts.push(part);
      left -= part.length;
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  /** Skips a zero-terminated field (FNAME, FCOMMENT) of any length. */
  async skipPastNul(): Promise<void> {
    for (;;) {
      const available = await this.available();
      const nul = available.indexOf(0);
      this.consume(nul >= 0 ? available.subarray(0, nul + 1) : available);
      if (nul >= 0) return;
    }
  }

  /** The unread bytes of the window, reading the next window when it is used up. */
  private async available(): Promise<Buffer> {
    let offset = this.pos - this.windowStart;
    if (offset >= this.window.length) {
      this.windowStart = this.pos;
      this.window = await readAt(this.file, this.pos, Math.min(HEADER_READ_BYTES, this.size - this.pos));
      offset = 0;
      if (this.window.length === 0) throw new GzipFormatError(`truncated: ${this.what} ends inside its header`);
    }
    return this.window.subarray(offset);
  }

  private consume(bytes: Buffer): void {
    this.crc = crc32(bytes, this.crc);
    this.pos += bytes.length;
  }
}
