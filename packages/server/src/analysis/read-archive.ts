// Reads a stored bundle once, streaming — object store → zstd → tar → each member — and
// collects what the findings are made of (ArchiveFacts), while checking the archive against
// the manifest that was registered with it. Everything read is untrusted; what it cannot
// vouch for ends the reading with Unanalysable, whose message becomes the one "could not
// analyse" finding:
//   - zstd: a frame that needs a window over ZSTD_WINDOW_LOG_MAX is refused by the decoder
//     (its memory is bounded), and the archive may not expand beyond what its manifest
//     declares plus the tar framing (a zstd bomb stops there);
//   - tar: strict (tar-reader.ts): regular files with plain names only;
//   - members: each must be listed in the manifest, once, with the size it declares (a larger
//     one is refused at its header, before a byte of it is read) and the SHA-256; a manifest
//     declaring more than DECLARED_MAX_BYTES in all is refused before anything is read;
//   - the archive's BUNDLE-MANIFEST.json must say what the registered manifest says;
//   - the whole reading has a deadline.
// A rotated segment that is not valid gzip, or inflates beyond what is left of the bundle's
// SEGMENT_TEXT_MAX_BYTES (all its segments together), is not the archive's fault: it is
// reported as a finding of its own and the reading goes on.

import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { constants, createGunzip, createZstdDecompress, type Gunzip, type ZstdOptions } from 'node:zlib';
import {
  AGENT_LOG_MEMBER,
  type BundleManifest,
  CONFIG_MEMBER,
  MANIFEST_MEMBER,
  parseManifest,
  SYSTEM_MEMBER,
} from '@guard/contract';
import { LogScanner, type LogStats } from './log-scan.ts';
import { type MemberRuleScanner, type RuleHit, RuleSet, type RuleSpec } from './rule-scan.ts';
import { type EntryConsumer, TarError, TarReader } from './tar-reader.ts';

/** 2^23 = 8 MiB: `zstd -19` needs at most that; the agent (level 3) 2 MiB. */
export const ZSTD_WINDOW_LOG_MAX = 23;
/** The manifest and system.json are small JSON documents. */
export const SMALL_MEMBER_MAX_BYTES = 1024 * 1024;
/** The rotated segments of a bundle are read (gunzipped) up to this much text, all together. */
export const SEGMENT_TEXT_MAX_BYTES = 1024 * 1024 * 1024;
/** The members of a bundle may declare this much in all (twice the largest bundle by default). */
export const DECLARED_MAX_BYTES = 4 * 1024 * 1024 * 1024;
/** Decompressed chunks of 1 MiB: fewer calls per byte (measured against 64 KiB to 256 KiB). */
const ZLIB_CHUNK_BYTES = 1024 * 1024;
const DECOMPRESSED_AHEAD_BYTES = 4 * 1024 * 1024;

/** The archive cannot be analysed; `member` names where, when one member is the cause. */
export class Unanalysable extends Error {
  readonly member: string | undefined;
  constructor(message: string, member?: string) {
    super(message);
    this.name = 'Unanalysable';
    this.member = member;
  }
}

export interface SegmentProblem {
  member: string;
  message: string;
}

export interface ArchiveFacts {
  /** agent.log and each rotated segment read, by member name. */
  logs: Map<string, LogStats>;
  /** system.json as parsed, with its text (evidence lines), or undefined when absent or not JSON. */
  system: { value: unknown; text: string } | undefined;
  /** The archive's own BUNDLE-MANIFEST.json text (evidence lines point into it). */
  manifestText: string;
  segmentProblems: SegmentProblem[];
  /** What each analyzer rule given matched, in the order given (none given: empty). */
  ruleHits: RuleHit[];
}

/** Bytes a tar archive of these members may take: headers, padding, end blocks, records. */
function tarBound(manifest: BundleManifest): number {
  let bytes = 0;
  for (const m of manifest.contents) bytes += 512 * 3 + Math.ceil(m.size / 512) * 512; // pax + header + padding
  return bytes + 512 * 3 + SMALL_MEMBER_MAX_BYTES + 20 * 512 + 10_240;
}

export async function readArchive(
  body: Readable,
  manifest: BundleManifest,
  options: { deadlineMs: number; signal?: AbortSignal; rules?: readonly RuleSpec[] },
): Promise<ArchiveFacts> {
  const declared = manifest.contents.reduce((sum, m) => sum + m.size, 0);
  if (declared > DECLARED_MAX_BYTES)
    throw new Unanalysable(
      `the manifest declares ${declared} bytes of members, more than the ${DECLARED_MAX_BYTES} an analysis reads`,
    );
  const expected = new Map(manifest.contents.map((m) => [m.name, m]));
  const segmentText = { left: SEGMENT_TEXT_MAX_BYTES };
  const seen = new Set<string>();
  const logs = new Map<string, LogStats>();
  const segmentProblems: SegmentProblem[] = [];
  let system: ArchiveFacts['system'];
  let manifestText: string | undefined;
  const rules = new RuleSet(options.rules ?? []);

  const reader = new TarReader((entry): EntryConsumer => {
    const { name, size } = entry;
    if (seen.has(name)) throw new Unanalysable(`member ${name} appears twice in the archive`, name);
    seen.add(name);
    const matcher = rules.forMember(name);
    if (name === MANIFEST_MEMBER) {
      if (size > SMALL_MEMBER_MAX_BYTES)
        throw new Unanalysable(`${MANIFEST_MEMBER} is ${size} bytes: no manifest is that large`, name);
      const parts: Buffer[] = [];
      return {
        data: (c) => void parts.push(Buffer.from(c)),
        end: () => {
          const bytes = Buffer.concat(parts);
          manifestText = bytes.toString('utf8');
          checkArchiveManifest(manifestText, manifest);
          matcher?.push(bytes);
          matcher?.end();
        },
      };
    }
    const want = expected.get(name);
    if (!want) throw new Unanalysable(`member ${name} is not listed in the manifest`, name);
    if (size !== want.size)
      throw new Unanalysable(
        size > want.size
          ? `member ${name} is ${size} bytes, far more than the ${want.size} its manifest declares`
          : `member ${name} is ${size} bytes, not the ${want.size} its manifest declares`,
        name,
      );
    const hash = createHash('sha256');
    const segment = name.endsWith('.gz');
    const inner = contentReader(name, size, logs, segmentProblems, segmentText, segment ? matcher : undefined, (s) => {
      system = s;
    });
    const plain = segment ? undefined : matcher;
    return {
      async data(chunk) {
        hash.update(chunk);
        plain?.push(chunk);
        await inner?.data(chunk);
      },
      async end() {
        plain?.end();
        await inner?.end();
        if (hash.digest('hex') !== want.sha256)
          throw new Unanalysable(`member ${name} does not match its SHA-256 in the manifest`, name);
      },
    };
  });

  const deadline = AbortSignal.timeout(options.deadlineMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  const zstd = createZstdDecompress({
    chunkSize: ZLIB_CHUNK_BYTES,
    // Decompression (libuv's thread pool) runs this far ahead of the scan (this thread); zlib
    // hands its options to Transform, which takes this one (@types/node does not list it).
    readableHighWaterMark: DECOMPRESSED_AHEAD_BYTES,
    params: { [constants.ZSTD_d_windowLogMax]: ZSTD_WINDOW_LOG_MAX },
  } as ZstdOptions);
  const bound = tarBound(manifest);
  const stop = () => {
    zstd.destroy();
    body.destroy();
  };
  signal.addEventListener('abort', stop, { once: true });
  body.on('error', (e) => zstd.destroy(e));
  body.pipe(zstd);
  let expanded = 0;
  try {
    for await (const chunk of zstd) {
      const c = chunk as Buffer;
      expanded += c.length;
      if (expanded > bound)
        throw new Unanalysable(
          `the archive expands beyond the ${bound} bytes its manifest accounts for (a zstd bomb?)`,
        );
      await reader.push(c);
    }
    await reader.finish();
  } catch (error) {
    stop();
    if (deadline.aborted)
      throw new Unanalysable(`the analysis did not finish within ${Math.round(options.deadlineMs / 1000)} s`);
    if (options.signal?.aborted) throw options.signal.reason ?? error;
    if (error instanceof Unanalysable) throw error;
    if (error instanceof TarError) throw new Unanalysable(error.message);
    throw new Unanalysable(`the archive is not a readable zstd-compressed tar: ${describe(error)}`);
  } finally {
    signal.removeEventListener('abort', stop);
  }
  for (const m of manifest.contents)
    if (!seen.has(m.name)) throw new Unanalysable(`member ${m.name} listed in the manifest is missing`, m.name);
  if (manifestText === undefined) throw new Unanalysable(`the archive has no ${MANIFEST_MEMBER}`);
  return { logs, system, manifestText, segmentProblems, ruleHits: rules.hits() };
}

/** Resolves when `stream` emits one of `events` (or 'close'); every listener added is removed then. */
function settled(stream: NodeJS.EventEmitter, events: string[]): Promise<void> {
  return new Promise((resolve) => {
    const all = [...events, 'close'];
    const done = () => {
      for (const e of all) stream.off(e, done);
      resolve();
    };
    for (const e of all) stream.on(e, done);
  });
}

/** A writable side has room again (or the stream is gone). */
export const drained = (stream: NodeJS.EventEmitter) => settled(stream, ['drain']);
/** A readable side has ended (or the stream is gone). */
export const ended = (stream: NodeJS.EventEmitter) => settled(stream, ['end']);

function describe(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return (e?.message ?? String(error)).replace(/\s+/g, ' ').slice(0, 300);
}

/** The archive's own manifest must be the one registered (same content, whatever the key order). */
function checkArchiveManifest(text: string, registered: BundleManifest): void {
  let own: BundleManifest;
  try {
    own = parseManifest(JSON.parse(text));
  } catch (error) {
    throw new Unanalysable(`the archive's ${MANIFEST_MEMBER} is not valid: ${describe(error)}`, MANIFEST_MEMBER);
  }
  if (canonical(own) !== canonical(registered))
    throw new Unanalysable(
      `the archive's ${MANIFEST_MEMBER} differs from the manifest registered with it`,
      MANIFEST_MEMBER,
    );
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v,
  );
}

/** What reads a member's content (beyond its hash), by what the member is. */
function contentReader(
  name: string,
  size: number,
  logs: Map<string, LogStats>,
  problems: SegmentProblem[],
  segmentText: { left: number },
  segmentRules: MemberRuleScanner | undefined,
  onSystem: (s: ArchiveFacts['system']) => void,
): EntryConsumer | undefined {
  if (name === AGENT_LOG_MEMBER) {
    const scanner = new LogScanner(name);
    return {
      data: (c) => scanner.push(c),
      end: () => void logs.set(name, scanner.end()),
    };
  }
  if (name === SYSTEM_MEMBER) {
    if (size > SMALL_MEMBER_MAX_BYTES) return undefined;
    const parts: Buffer[] = [];
    return {
      data: (c) => void parts.push(Buffer.from(c)),
      end: () => {
        const text = Buffer.concat(parts).toString('utf8');
        try {
          onSystem({ value: JSON.parse(text), text });
        } catch {
          onSystem(undefined);
        }
      },
    };
  }
  if (name === CONFIG_MEMBER) return undefined;
  if (name.endsWith('.gz')) return segmentReader(name, logs, problems, segmentText, segmentRules);
  return undefined;
}

/** A rotated segment: gunzipped as it streams, its text scanned like agent.log, within what is left of the text budget. */
function segmentReader(
  name: string,
  logs: Map<string, LogStats>,
  problems: SegmentProblem[],
  budget: { left: number },
  rules: MemberRuleScanner | undefined,
): EntryConsumer {
  const scanner = new LogScanner(name);
  let gunzip: Gunzip | undefined = createGunzip({ chunkSize: ZLIB_CHUNK_BYTES });
  let failed: string | undefined;
  const give = (why: string) => {
    failed ??= why;
    gunzip?.destroy();
    gunzip = undefined;
  };
  gunzip.on('data', (c: Buffer) => {
    budget.left -= c.length;
    if (budget.left < 0) {
      give(
        `inflates beyond the ${SEGMENT_TEXT_MAX_BYTES} bytes of text read from a bundle's segments: only its beginning was read`,
      );
      return;
    }
    scanner.push(c);
    rules?.push(c);
  });
  gunzip.on('error', (e) => give(`is not valid gzip (${describe(e)}): only what came before was read`));
  return {
    async data(chunk) {
      const g = gunzip;
      if (!g) return;
      if (!g.write(chunk)) await drained(g);
    },
    async end() {
      const g = gunzip;
      if (g) {
        g.end();
        await ended(g);
      }
      if (failed) problems.push({ member: name, message: `${name} ${failed}` });
      logs.set(name, scanner.end());
      rules?.end();
    },
  };
}
