// The lines around a finding's evidence, for people to read in context: streams the stored
// archive to the one member (gunzipping a rotated segment), keeps the lines asked for, and
// stops reading as soon as it has them. The same strict tar reader and zstd window limit as the
// analysis; bounded in lines, in line length and in time.

import type { Readable } from 'node:stream';
import { constants, createGunzip, createZstdDecompress } from 'node:zlib';
import { drained, ended, ZSTD_WINDOW_LOG_MAX } from './read-archive.ts';
import { type EntryConsumer, TarReader } from './tar-reader.ts';

export const MAX_CONTEXT_LINES = 50;
export const LINE_SHOWN_CHARS = 2000;
const DEADLINE_MS = 60_000;

export interface MemberLines {
  member: string;
  /** The 1-based number of lines[0]. */
  first_line: number;
  lines: string[];
}

/** Lines [from, to] (1-based, inclusive) of `member`; undefined when the archive has no such member. */
export async function memberLines(
  body: Readable,
  member: string,
  from: number,
  to: number,
): Promise<MemberLines | undefined> {
  const lines: string[] = [];
  let found = false;
  let done = false;
  const zstd = createZstdDecompress({ params: { [constants.ZSTD_d_windowLogMax]: ZSTD_WINDOW_LOG_MAX } });
  const stop = () => {
    zstd.destroy();
    body.destroy();
  };
  const reader = new TarReader(({ name }): EntryConsumer => {
    if (name !== member || found) return { data() {}, end() {} };
    found = true;
    const collector = new LineCollector(from, to, lines, () => {
      done = true;
    });
    if (!name.endsWith('.gz')) return { data: (c) => collector.push(c), end: () => collector.end() };
    const gunzip = createGunzip();
    gunzip.on('data', (c: Buffer) => collector.push(c));
    gunzip.on('error', () => {});
    return {
      async data(c) {
        if (done) return;
        if (!gunzip.write(c)) await drained(gunzip);
      },
      async end() {
        gunzip.end();
        await ended(gunzip);
        collector.end();
      },
    };
  });
  const deadline = setTimeout(stop, DEADLINE_MS);
  body.on('error', (e) => zstd.destroy(e));
  body.pipe(zstd);
  try {
    for await (const chunk of zstd) {
      await reader.push(chunk as Buffer);
      if (done) break;
    }
  } finally {
    clearTimeout(deadline);
    stop();
  }
  if (!found) return undefined;
  return { member, first_line: from, lines };
}

class LineCollector {
  readonly #from: number;
  readonly #to: number;
  readonly #out: string[];
  readonly #onDone: () => void;
  #line = 1;
  #partial = '';

  constructor(from: number, to: number, out: string[], onDone: () => void) {
    this.#from = from;
    this.#to = to;
    this.#out = out;
    this.#onDone = onDone;
  }

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && this.#line <= this.#to) {
      const nl = chunk.indexOf(10, at);
      const end = nl === -1 ? chunk.length : nl;
      if (this.#line >= this.#from && this.#partial.length < LINE_SHOWN_CHARS)
        this.#partial += chunk.toString('utf8', at, Math.min(end, at + LINE_SHOWN_CHARS));
      if (nl === -1) return;
      this.#emit();
      at = nl + 1;
    }
    if (this.#line > this.#to) this.#onDone();
  }

  end(): void {
    if (this.#partial !== '' && this.#line <= this.#to) this.#emit();
    this.#onDone();
  }

  #emit(): void {
    if (this.#line >= this.#from) this.#out.push(this.#partial.slice(0, LINE_SHOWN_CHARS));
    this.#partial = '';
    this.#line++;
  }
}
