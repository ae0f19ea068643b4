// `support-bundle reveal --map FILE` (DESIGN §4, bundles, second round): copies standard
// input to standard output with every token of the map (`host-1`, `ip-2`, …) replaced by
// its original, streaming. A token counts where it stands as a whole: not inside a word
// (`xhost-1`) nor as the head of a longer number (`host-12` is not `host-1`). A token the map
// does not hold is left as it is.

import { readFile } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { AgentError, describeSystemError } from '../errors.ts';
import { TOKEN_PATTERN } from './obfuscate.ts';

/** A map larger than this is refused (a million values fit in a fraction of it). */
export const MAX_MAP_BYTES = 256 * 1024 * 1024;
const TOKENS = /(?<![A-Za-z0-9])(?:host|ip|user|email)-[1-9][0-9]*(?![0-9])/g;
/** Chars a token is made of: a chunk is cut after the last char that is none of them. */
const TOKEN_CHAR = /[A-Za-z0-9-]/;
/** Text held back without such a char before it is processed anyway. */
const MAX_CARRY_BYTES = 1024 * 1024;

/** Reads and checks a map written by `collect --obfuscate`: `{token: original}`. */
export async function readObfuscationMap(path: string): Promise<Map<string, string>> {
  let text: string;
  try {
    const bytes = await readFile(path);
    if (bytes.length > MAX_MAP_BYTES) throw new Error(`larger than ${MAX_MAP_BYTES} bytes`);
    text = bytes.toString('utf8');
  } catch (error) {
    throw new AgentError('io', `cannot read the map ${path}: ${describeSystemError(error)}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new AgentError('usage', `--map ${path}: not an obfuscation map: not valid JSON`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new AgentError('usage', `--map ${path}: not an obfuscation map: not a JSON object`);
  const map = new Map<string, string>();
  for (const [token, original] of Object.entries(doc)) {
    if (!TOKEN_PATTERN.test(token) || typeof original !== 'string')
      throw new AgentError(
        'usage',
        `--map ${path}: not an obfuscation map: entry ${JSON.stringify(token.slice(0, 40))} is not a token with a string value`,
      );
    // Text is handled as latin1 (one char per byte): the original as its UTF-8 bytes.
    map.set(token, Buffer.from(original, 'utf8').toString('latin1'));
  }
  return map;
}

export class RevealStream extends Transform {
  private carry: Buffer = Buffer.alloc(0);
  private readonly originals: ReadonlyMap<string, string>;
  /** Tokens replaced. */
  revealed = 0;

  constructor(map: ReadonlyMap<string, string>) {
    super({ highWaterMark: 1 << 20 });
    this.originals = map;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const buf = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    let cut = buf.length;
    while (cut > 0 && TOKEN_CHAR.test(String.fromCharCode(buf[cut - 1]))) cut--;
    if (cut === 0 && buf.length <= MAX_CARRY_BYTES) {
      this.carry = Buffer.from(buf);
      done();
      return;
    }
    if (cut === 0) cut = buf.length;
    this.process(buf.subarray(0, cut));
    this.carry = cut < buf.length ? Buffer.from(buf.subarray(cut)) : Buffer.alloc(0);
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.carry.length > 0) this.process(this.carry);
    this.carry = Buffer.alloc(0);
    done();
  }

  private process(bytes: Buffer): void {
    const text = bytes.toString('latin1');
    const out = text.replace(TOKENS, (token) => {
      const original = this.originals.get(token);
      if (original === undefined) return token;
      this.revealed++;
      return original;
    });
    this.push(out === text ? bytes : Buffer.from(out, 'latin1'));
  }
}
