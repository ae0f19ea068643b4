// A strict, streaming reader of the tar archives inside support bundles, for untrusted input.
// Written here rather than taken from tar-stream (which the agent writes bundles with) because
// tar-stream keeps a pax or GNU long-name header whole in memory however large it declares
// itself, and accepts every entry type: a hostile archive could make the service hold hundreds
// of MiB, or hand it a symlink. This reader:
//   - holds at most one 512-byte header block and a pax header of at most PAX_MAX_BYTES;
//   - verifies each header's checksum;
//   - accepts regular files only (typeflag '0' or NUL), and pax extended headers ('x') that
//     carry path or size for the next entry; every other type (symlinks, hard links,
//     directories, devices, FIFOs, GNU long names, global pax headers) is refused;
//   - refuses names that are not plain file names: absolute, with '/', '..', '.', NUL or empty;
//   - hands each entry's data to its consumer as views of the input chunks (no copy).
// Errors are TarError with a sentence that says what is wrong, for the "could not analyse" finding.

export class TarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TarError';
  }
}

export interface TarEntry {
  name: string;
  size: number;
}

/** What the caller does with one entry's bytes. `data` views the input: use it before returning. */
export interface EntryConsumer {
  data(chunk: Buffer): void | Promise<void>;
  end(): void | Promise<void>;
}

const BLOCK = 512;
/** A pax extended header of ours carries a path and a size: a few hundred bytes. */
export const PAX_MAX_BYTES = 64 * 1024;
const NAME_PATTERN = /^[A-Za-z0-9._-]{1,255}$/;

type State =
  | { kind: 'header' }
  | { kind: 'data'; left: number; padding: number; consumer: EntryConsumer }
  | { kind: 'pax'; left: number; padding: number; parts: Buffer[]; size: number }
  | { kind: 'skip'; left: number }
  | { kind: 'end' };

/**
 * Feed with push(chunk) in order (awaiting each), then finish(). `onEntry` is called for each
 * regular file and returns its consumer.
 */
export class TarReader {
  readonly #onEntry: (entry: TarEntry) => EntryConsumer;
  #state: State = { kind: 'header' };
  /** A header block split across input chunks. */
  #partial: Buffer | undefined;
  #pax: { path?: string; size?: number } | undefined;
  #zeroBlocks = 0;
  #entries = 0;

  constructor(onEntry: (entry: TarEntry) => EntryConsumer) {
    this.#onEntry = onEntry;
  }

  get entries(): number {
    return this.#entries;
  }

  async push(chunk: Buffer): Promise<void> {
    let at = 0;
    while (at < chunk.length) {
      const state = this.#state;
      switch (state.kind) {
        case 'end':
          // Bytes after the end-of-archive marker: zero padding up to the record size is usual.
          if (chunk.subarray(at).some((b) => b !== 0)) throw new TarError('data follows the end of the tar archive');
          return;
        case 'skip': {
          const n = Math.min(state.left, chunk.length - at);
          state.left -= n;
          at += n;
          if (state.left === 0) this.#state = { kind: 'header' };
          break;
        }
        case 'data': {
          const n = Math.min(state.left, chunk.length - at);
          if (n > 0) await state.consumer.data(chunk.subarray(at, at + n));
          state.left -= n;
          at += n;
          if (state.left === 0) {
            await state.consumer.end();
            this.#state = state.padding > 0 ? { kind: 'skip', left: state.padding } : { kind: 'header' };
          }
          break;
        }
        case 'pax': {
          const n = Math.min(state.left, chunk.length - at);
          state.parts.push(Buffer.from(chunk.subarray(at, at + n)));
          state.left -= n;
          at += n;
          if (state.left === 0) {
            this.#pax = parsePax(Buffer.concat(state.parts, state.size));
            this.#state = state.padding > 0 ? { kind: 'skip', left: state.padding } : { kind: 'header' };
          }
          break;
        }
        case 'header': {
          let block: Buffer;
          if (this.#partial) {
            const need = BLOCK - this.#partial.length;
            const take = chunk.subarray(at, at + need);
            this.#partial = Buffer.concat([this.#partial, take]);
            at += take.length;
            if (this.#partial.length < BLOCK) return;
            block = this.#partial;
            this.#partial = undefined;
          } else if (chunk.length - at < BLOCK) {
            this.#partial = Buffer.from(chunk.subarray(at));
            return;
          } else {
            block = chunk.subarray(at, at + BLOCK);
            at += BLOCK;
          }
          await this.#header(block);
          break;
        }
      }
    }
  }

  /** The input is over: it must have ended at an entry boundary. */
  async finish(): Promise<void> {
    const state = this.#state;
    if (state.kind === 'data' || state.kind === 'pax' || (state.kind === 'skip' && state.left > 0) || this.#partial)
      throw new TarError('the tar archive is truncated: it ends inside an entry');
    if (state.kind !== 'end' && this.#entries === 0) throw new TarError('the archive holds no tar entry');
  }

  async #header(block: Buffer): Promise<void> {
    if (isZero(block)) {
      this.#zeroBlocks++;
      if (this.#zeroBlocks === 2) this.#state = { kind: 'end' };
      return;
    }
    if (this.#zeroBlocks > 0) throw new TarError('a tar header follows an empty block');
    if (!checksumOk(block))
      throw new TarError('a tar header has a wrong checksum: this is not a tar archive, or it is damaged');
    const type = String.fromCharCode(block[156]);
    const declared = readSize(block);
    const padding = (BLOCK - (declared % BLOCK)) % BLOCK;
    if (type === 'x') {
      if (declared > PAX_MAX_BYTES)
        throw new TarError(`a pax header declares ${declared} bytes (at most ${PAX_MAX_BYTES} are accepted)`);
      this.#state = { kind: 'pax', left: declared, padding, parts: [], size: declared };
      if (declared === 0) this.#state = { kind: 'header' };
      return;
    }
    const rawName = readName(block);
    const name = this.#pax?.path ?? rawName;
    const size = this.#pax?.size ?? declared;
    this.#pax = undefined;
    if (type !== '0' && type !== '\0')
      throw new TarError(`member ${JSON.stringify(name)} is ${describeType(type)}, not a regular file`);
    if (!NAME_PATTERN.test(name) || name === '.' || name === '..')
      throw new TarError(
        `member name ${JSON.stringify(name.slice(0, 200))} is not a plain file name (absolute, a path, or unusual characters)`,
      );
    this.#entries++;
    const consumer = this.#onEntry({ name, size });
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    this.#state = size === 0 ? { kind: 'header' } : { kind: 'data', left: size, padding: pad, consumer };
    if (size === 0) await consumer.end();
  }
}

function isZero(block: Buffer): boolean {
  for (let i = 0; i < block.length; i++) if (block[i] !== 0) return false;
  return true;
}

/** The header checksum: the sum of its bytes with the checksum field read as spaces (POSIX). */
function checksumOk(block: Buffer): boolean {
  const field = block.subarray(148, 156).toString('latin1').replace(/\0.*$/s, '').trim();
  if (!/^[0-7]{1,7}$/.test(field)) return false;
  let sum = 8 * 0x20;
  for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) sum += block[i];
  return sum === Number.parseInt(field, 8);
}

function readSize(block: Buffer): number {
  const field = block.subarray(124, 136);
  if (field[0] & 0x80) {
    // GNU base-256: big-endian, the top bit of the first byte a flag; sizes past 2^53 are refused.
    let n = field[0] & 0x7f;
    for (let i = 1; i < field.length; i++) {
      n = n * 256 + field[i];
      if (n > Number.MAX_SAFE_INTEGER) throw new TarError('a tar header declares an impossible size');
    }
    return n;
  }
  const text = field
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .replace(/^ +/, '');
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarError('a tar header has a size that is not a number');
  return Number.parseInt(text, 8);
}

function readName(block: Buffer): string {
  const cut = (b: Buffer) => {
    const nul = b.indexOf(0);
    return b.subarray(0, nul === -1 ? b.length : nul).toString('utf8');
  };
  const name = cut(block.subarray(0, 100));
  const magic = block.subarray(257, 263).toString('latin1');
  const prefix = magic.startsWith('ustar') ? cut(block.subarray(345, 500)) : '';
  return prefix ? `${prefix}/${name}` : name;
}

function describeType(type: string): string {
  const kinds: Record<string, string> = {
    '1': 'a hard link',
    '2': 'a symbolic link',
    '3': 'a character device',
    '4': 'a block device',
    '5': 'a directory',
    '6': 'a FIFO',
    '7': 'a contiguous file',
    g: 'a global pax header',
    L: 'a GNU long name',
    K: 'a GNU long link name',
  };
  return kinds[type] ?? `an entry of type ${JSON.stringify(type)}`;
}

/** `<length> <key>=<value>\n` records (POSIX pax); only path and size are used. */
function parsePax(buf: Buffer): { path?: string; size?: number } {
  const out: { path?: string; size?: number } = {};
  let at = 0;
  while (at < buf.length) {
    const space = buf.indexOf(0x20, at);
    if (space === -1) throw new TarError('a pax header is malformed');
    const length = Number(buf.subarray(at, space).toString('latin1'));
    if (!Number.isSafeInteger(length) || length <= 0 || at + length > buf.length)
      throw new TarError('a pax header is malformed');
    const record = buf.subarray(space + 1, at + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq === -1) throw new TarError('a pax header is malformed');
    const key = record.slice(0, eq);
    const value = record.slice(eq + 1);
    if (key === 'path') out.path = value;
    if (key === 'size') {
      if (!/^\d{1,15}$/.test(value)) throw new TarError('a pax header declares an impossible size');
      out.size = Number(value);
    }
    at += length;
  }
  return out;
}
