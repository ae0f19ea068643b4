// `support-bundle collect`: builds the redacted .tar.zst bundle (spec 2.1, 2.2, 4.1; DESIGN §3).
//
// Named steps:
//   1. resolve the target and refuse an existing one; create the directory; open a work dir
//   2. agent.log: redact the newest ≤ cap bytes into the work dir (the tar header needs the
//      redacted size first), counting ERROR lines of the last 24 h on the way
//   3. system.json and config.redacted.json
//   4. rotated segments newest-first: scan (gunzip member by member + count); copy byte for
//      byte when nothing is masked and the file is nothing but gzip members without header
//      text fields (gzip-members.ts), else redact + re-gzip its content into the work dir;
//      take it if it fits under the cap.
//      Preparing segment N+1 overlaps the archiving of segment N (zstd runs off-thread).
//   5. BUNDLE-MANIFEST.json last, then fsync, publish with link(), and report
// Every log member goes through RedactStream: no code path archives a log unredacted.
// With --obfuscate (DESIGN §4, bundles, second round) every log member also goes through an
// ObfuscateStream after its RedactStream (credentials are masked first), system.json through
// the same Obfuscator, and no segment is copied byte for byte; the private map is linked in
// beside the bundle (<bundle>.map.json, 0600) just before the bundle itself.
// A source that fails is recorded in collection_errors and the bundle is still built.
// Every source is opened with O_NOFOLLOW | O_NONBLOCK and must be a regular file by fstat
// (regular-file.ts; DESIGN §3, what collect reads): no link is followed, no FIFO waited on.

import { createReadStream, createWriteStream } from 'node:fs';
import { type FileHandle, link, lstat, readdir, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createGzip } from 'node:zlib';
import {
  AGENT_LOG_MEMBER,
  BUNDLE_CAP_BYTES,
  type BundleTrigger,
  CONFIG_MEMBER,
  MANIFEST_MEMBER,
  rotatedSegmentNumber,
  SYSTEM_MEMBER,
} from '@guard/contract/bundle';
import type { BundleManifest, CollectionError, ManifestMember } from '@guard/contract/manifest';
import type { AgentConfig } from '../config.ts';
import { AgentError, describeSystemError } from '../errors.ts';
import { ensureOutputDir } from '../output-dir.ts';
import type { Progress } from '../progress.ts';
import { kindOf, NotRegularFileError, openRegularFile } from '../regular-file.ts';
import { ArchiveWriter, ZLIB_CHUNK_BYTES } from './archive.ts';
import { byteCopyable, gunzipMembers, newFraming } from './gzip-members.ts';
import { readKnownNames } from './known-names.ts';
import { buildManifest, manifestBytes } from './manifest.ts';
import { OBFUSCATION_KINDS, ObfuscateStream, Obfuscator } from './obfuscate.ts';
import { createWorkDir, defaultBundlePath, publish, refuseExisting, removeWorkDir, tempBundleName } from './output.ts';
import { compileExtraKeys, type KeyRules, RedactStream } from './redact.ts';
import { redactConfig } from './redact-config.ts';
import { SegmentSelector } from './select-segments.ts';
import { collectSystemInfo, ErrorLineCounter, type SystemSources } from './system-info.ts';

/** Room kept under the cap for system.json, config.redacted.json and redaction growth. */
export const SMALL_MEMBERS_RESERVE_BYTES = 1024 * 1024;
/** How many segments are prepared ahead of the one being archived (measured: 3 ≈ 4 MiB RSS). */
const SEGMENT_LOOKAHEAD = 3;
/** Re-gzip level of a redacted segment: zlib's default, close to logrotate's own output. */
const GZIP_LEVEL = constants.Z_DEFAULT_COMPRESSION;
/**
 * zlib's largest hash table (memLevel 9, 256 KiB more state than the default 8): 12 % less
 * CPU for the same output size on log text (measured: 0.82 against 0.93 s per 64 MiB segment,
 * 12.01 against 12.02 MiB); re-gzipping is the largest cost of collect --obfuscate.
 */
const GZIP_MEM_LEVEL = 9;
/**
 * Re-gzip level with --obfuscate, where every segment is rewritten: level 5 takes 25 % less
 * CPU than 6 (measured on the bench's obfuscated text: 0.67 against 0.89 s per 64 MiB, 11.94
 * against 11.66 MiB, still under the 12.0 MiB of the original at 6). A segment whose level-5
 * form does not fit under the cap is re-gzipped at GZIP_LEVEL before it is given up, so the
 * faster level never trims a segment that the default level would have kept.
 */
const OBFUSCATE_GZIP_LEVEL = 5;
/**
 * A segment's rewrite (gunzip → redact → obfuscate → gzip → work dir) in 256 KiB zlib chunks
 * with 64 KiB buffered between stages: gzip is its slowest stage, so every stage before it
 * stays full, and with 1 MiB chunks and buffers the three segments in flight held ~20 MiB of
 * live buffers (peak RSS of collect --obfuscate 135–139 MiB; 109–111 MiB so, at the same CPU).
 */
const REWRITE_CHUNK_BYTES = 256 * 1024;
const REWRITE_HIGH_WATER_MARK = 64 * 1024;

export interface CollectOptions {
  config: AgentConfig;
  /** --out as given; relative paths resolve against cwd. */
  out: string | undefined;
  cwd: string;
  agentVersion: string;
  trigger: BundleTrigger;
  /** With trigger console_push: the bundle request it answers (the manifest's request_id). */
  requestId?: string;
  now: () => Date;
  progress: Progress;
  sources: SystemSources;
  /** Cap on the stored members; fixed by the spec, a parameter only for tests. */
  capBytes?: number;
  /** --obfuscate: replace host names, addresses, user names and emails with tokens. */
  obfuscate?: boolean;
}

export interface CollectResult {
  path: string;
  /** With obfuscate: the private map beside the bundle. */
  mapPath?: string;
  size: number;
  sha256: string;
  manifest: BundleManifest;
}

export async function collectBundle(options: CollectOptions): Promise<CollectResult> {
  const { config, progress } = options;
  const extraKeys = compileRules(config);
  const generatedAt = options.now();
  const target = resolve(options.cwd, options.out ?? defaultBundlePath(config.stateDir, generatedAt));
  const mapTarget = options.obfuscate ? obfuscationMapPath(target) : undefined;
  await refuseExisting(target);
  if (mapTarget) await refuseExisting(mapTarget);
  await ensureOutputDir(dirname(target));
  const workDir = await createWorkDir(dirname(target));
  try {
    const tempFile = join(workDir, tempBundleName(target));
    const obfuscator = options.obfuscate ? new Obfuscator(await readKnownNames(options.sources)) : undefined;
    const run = new CollectRun(options, workDir, generatedAt, extraKeys, obfuscator);
    const result = await run.build(tempFile);
    if (obfuscator && mapTarget) {
      await publishMap(workDir, obfuscator, mapTarget);
      try {
        await publish(tempFile, target);
      } catch (error) {
        await unlink(mapTarget).catch(() => {});
        throw error;
      }
      return { path: target, mapPath: mapTarget, ...result };
    }
    await publish(tempFile, target);
    return { path: target, ...result };
  } finally {
    progress.done();
    await removeWorkDir(workDir);
  }
}

/** Where the private map of an obfuscated bundle goes: beside it, never inside. */
export function obfuscationMapPath(bundle: string): string {
  return `${bundle}.map.json`;
}

/** Writes the map (0600, fsynced) in the work dir and links it in at `target`, never overwriting. */
async function publishMap(workDir: string, obfuscator: Obfuscator, target: string): Promise<void> {
  const temp = join(workDir, 'map.json');
  try {
    await writeFile(temp, `${JSON.stringify(obfuscator.map(), null, 2)}\n`, { mode: 0o600, flag: 'wx', flush: true });
  } catch (error) {
    throw new AgentError('output_dir', `cannot write the obfuscation map: ${describeSystemError(error)}`);
  }
  try {
    await link(temp, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new AgentError('output_exists', `refusing to overwrite ${target}: a file appeared there during collect`);
    throw new AgentError('output_dir', `cannot create ${target}: ${describeSystemError(error)}`);
  }
}

interface PreparedSegment {
  name: string;
  path: string;
  file: FileHandle;
  /** Redacted and re-gzipped copy in the work dir, or undefined to copy the original bytes. */
  spool: string | undefined;
  /** The gzip level of the spool. */
  level?: number;
  size: number;
  masked: number;
}

class CollectRun {
  private readonly errors: CollectionError[] = [];
  private readonly masked = new Map<string, number>();
  private readonly contents: ManifestMember[] = [];
  private readonly options: CollectOptions;
  private readonly workDir: string;
  private readonly generatedAt: Date;
  private readonly cap: number;

  /** The operator's redaction.extra_keys, compiled once, given to every RedactStream. */
  private readonly extraKeys: KeyRules;
  /** With --obfuscate: the one Obfuscator of this bundle, so a value is one token everywhere. */
  private readonly obfuscator: Obfuscator | undefined;

  constructor(
    options: CollectOptions,
    workDir: string,
    generatedAt: Date,
    extraKeys: KeyRules,
    obfuscator: Obfuscator | undefined,
  ) {
    this.options = options;
    this.workDir = workDir;
    this.generatedAt = generatedAt;
    this.cap = options.capBytes ?? BUNDLE_CAP_BYTES;
    this.extraKeys = extraKeys;
    this.obfuscator = obfuscator;
  }

  /** After a RedactStream: the ObfuscateStream of this bundle, when obfuscating. */
  private obfuscation(highWaterMark?: number): ObfuscateStream[] {
    return this.obfuscator ? [new ObfuscateStream(this.obfuscator, highWaterMark)] : [];
  }

  async build(tempFile: string): Promise<Omit<CollectResult, 'path'>> {
    const archive = new ArchiveWriter(tempFile, this.generatedAt, (bytes) => this.options.progress.advance(bytes));
    try {
      return await this.fill(archive);
    } catch (error) {
      archive.destroy(error as Error);
      throw error;
    }
  }

  private async fill(archive: ArchiveWriter): Promise<Omit<CollectResult, 'path'>> {
    const { config, progress } = this.options;
    const segments = await this.listSegments();
    // Progress totals up front: each segment is read to scan it, then archived (progress.ts).
    progress.grow(2 * segments.reduce((sum, s) => sum + s.size, 0));
    const agentLog = await this.redactAgentLog();
    if (agentLog) {
      progress.phase(`archiving ${AGENT_LOG_MEMBER}`);
      this.contents.push(await archive.addStream(AGENT_LOG_MEMBER, agentLog.size, createReadStream(agentLog.spool)));
    }

    const { info, errors } = await collectSystemInfo({
      agentVersion: this.options.agentVersion,
      stateDir: config.stateDir,
      logPath: config.logPath,
      errorLines24h: agentLog ? agentLog.errorLines : null,
      now: this.generatedAt,
      sources: this.options.sources,
    });
    this.errors.push(...errors);
    const systemJson = jsonBytes(info);
    this.contents.push(
      await archive.addBuffer(
        SYSTEM_MEMBER,
        this.obfuscator ? Buffer.from(this.obfuscator.obfuscate(systemJson.toString('latin1')), 'latin1') : systemJson,
      ),
    );
    if (config.unread) this.errors.push(config.unread);
    else this.contents.push(await archive.addBuffer(CONFIG_MEMBER, jsonBytes(redactConfig(config.effective))));

    const trimmed = await this.addSegments(
      archive,
      segments.map((s) => s.path),
    );

    const manifest = buildManifest({
      agentVersion: this.options.agentVersion,
      generatedAt: this.generatedAt,
      trigger: this.options.trigger,
      requestId: this.options.requestId,
      contents: this.contents,
      trimmedSegments: trimmed,
      maskedByMember: this.masked,
      collectionErrors: this.errors,
      extraKeys: config.extraKeys,
      obfuscation: this.obfuscator && { kinds: [...OBFUSCATION_KINDS], values: this.obfuscator.values },
    });
    progress.phase('finishing');
    await archive.addBuffer(MANIFEST_MEMBER, manifestBytes(manifest)); // not listed in contents
    const file = await archive.finish();
    return { ...file, manifest };
  }

  /**
   * Adds the segments (newest first) that fit under the cap and returns the trimmed ones.
   * Preparing the next segments overlaps archiving the current one.
   */
  private async addSegments(archive: ArchiveWriter, paths: string[]): Promise<string[]> {
    const { progress } = this.options;
    const selector = new SegmentSelector(
      this.contents.reduce((sum, m) => sum + m.size, 0),
      this.cap,
    );
    // Segments are prepared SEGMENT_LOOKAHEAD ahead, so a dirty segment's re-gzip (zlib's
    // thread pool) overlaps the scanning of the next ones.
    const pending: Promise<PreparedSegment | undefined>[] = [];
    let started = 0;
    const refill = () => {
      while (started < paths.length && pending.length < SEGMENT_LOOKAHEAD) {
        const prepared = this.prepareSegment(paths[started++]);
        // Its failure is taken when its turn comes (awaited below) or in the finally; until
        // then it must not count as unhandled (Node would end the process).
        prepared.catch(() => {});
        pending.push(prepared);
      }
    };
    refill();
    try {
      for (let i = 0; i < paths.length; i++) {
        const prepared = await pending.shift();
        refill();
        if (!prepared) continue;
        try {
          if (!selector.fits(prepared.size) && prepared.level !== undefined && prepared.level !== GZIP_LEVEL) {
            const again = await this.rewriteSegment(prepared.file, prepared.path, GZIP_LEVEL);
            progress.grow(again.size - prepared.size);
            Object.assign(prepared, again);
          }
          if (!selector.offer(prepared)) {
            progress.grow(-prepared.size); // not archived after all
            continue;
          }
          progress.phase(`archiving ${prepared.name}`);
          const source = prepared.spool
            ? createReadStream(prepared.spool)
            : prepared.file.createReadStream({ start: 0, end: prepared.size - 1, autoClose: false });
          this.contents.push(await archive.addStream(prepared.name, prepared.size, source));
          this.masked.set(prepared.name, prepared.masked);
        } finally {
          await prepared.file.close();
        }
      }
    } finally {
      // Non-empty only when the loop threw: close the segments being prepared.
      for (const p of pending) await p.then((s) => s?.file.close()).catch(() => {});
    }
    return selector.trimmed;
  }

  /**
   * Rotated segments beside log_path, newest (N = 1) first, with their sizes by lstat (which
   * follows no link; only for progress: what counts is what prepareSegment opens).
   */
  private async listSegments(): Promise<{ name: string; path: string; size: number }[]> {
    const dir = dirname(this.options.config.logPath);
    const base = basename(this.options.config.logPath);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.fail(dir, error);
      return [];
    }
    const numbered = names
      .map((name) => ({ name, n: rotatedSegmentNumber(base, name) }))
      .filter((s): s is { name: string; n: number } => s.n !== undefined)
      .sort((a, b) => a.n - b.n);
    const segments = [];
    for (const { name } of numbered) {
      const path = join(dir, name);
      const size = await lstat(path).then(
        (s) => (kindOf(s) === undefined ? s.size : 0),
        () => 0,
      );
      segments.push({ name, path, size });
    }
    return segments;
  }

  /**
   * Redacts the newest part of the current log that fits under the cap into the work dir.
   * Returns undefined (and records why) when there is no log or it cannot be read whole.
   */
  private async redactAgentLog(): Promise<{ spool: string; size: number; errorLines: number } | undefined> {
    const { logPath } = this.options.config;
    const { progress } = this.options;
    let file: FileHandle;
    try {
      file = await openRegularFile(logPath);
    } catch (error) {
      this.fail(logPath, error);
      return undefined;
    }
    try {
      const { size: fullSize } = await file.stat();
      const budget = this.cap - SMALL_MEMBERS_RESERVE_BYTES;
      const start = await newestLineStart(file, fullSize, budget);
      if (start > 0)
        this.errors.push({
          source: logPath,
          message: `the log is ${fullSize} bytes; only its newest ${fullSize - start} bytes fit under the ${this.cap}-byte cap`,
        });
      progress.grow(2 * (fullSize - start)); // read to redact, then archived
      progress.phase('redacting agent.log');
      const spool = join(this.workDir, AGENT_LOG_MEMBER);
      const counter = new ErrorLineCounter(this.generatedAt);
      const redactor = new RedactStream({
        extraKeys: this.extraKeys,
        observer: { needle: Buffer.from('ERROR'), onLine: (l) => counter.onLine(l) },
      });
      // Read up to the size seen now: lines the agent appends meanwhile belong to the next bundle.
      const source =
        fullSize > start
          ? file.createReadStream({ start, end: fullSize - 1, autoClose: false, highWaterMark: ZLIB_CHUNK_BYTES })
          : Readable.from([]);
      source.on('data', (chunk: Buffer) => progress.advance(chunk.length));
      try {
        await pipeline(source, redactor, ...this.obfuscation(), createWriteStream(spool, { flags: 'wx', mode: 0o600 }));
      } catch (error) {
        throw this.sourceOrOwnFailure(logPath, spool, error);
      }
      const size = (await stat(spool)).size;
      progress.grow(size - (fullSize - start)); // what is archived is the redacted copy
      this.masked.set(AGENT_LOG_MEMBER, redactor.masked);
      if (size > this.cap - SMALL_MEMBERS_RESERVE_BYTES / 2) {
        this.errors.push({ source: logPath, message: 'left out: its redacted form does not fit under the cap' });
        this.masked.delete(AGENT_LOG_MEMBER);
        progress.grow(-size);
        return undefined;
      }
      return { spool, size, errorLines: counter.count };
    } catch (error) {
      if (error instanceof AgentError) throw error;
      this.fail(logPath, error);
      return undefined;
    } finally {
      await file.close();
    }
  }

  /**
   * Scans one segment; when something must be masked, writes its redacted, re-gzipped form
   * into the work dir. Returns undefined (and records why) for a segment that cannot be read
   * or gunzipped whole: it is left out rather than included unredacted.
   */
  private async prepareSegment(path: string): Promise<PreparedSegment | undefined> {
    const name = basename(path);
    const { progress } = this.options;
    let file: FileHandle;
    try {
      file = await openRegularFile(path);
    } catch (error) {
      this.fail(path, error);
      return undefined;
    }
    try {
      const { size } = await file.stat();
      if (this.obfuscator) {
        // Every segment is rewritten (its text changes): no scan pass, the rewrite reads it once.
        progress.advance(size);
      } else {
        const scan = new RedactStream({ discard: true, extraKeys: this.extraKeys });
        const framing = newFraming();
        progress.phase(`scanning ${name}`);
        await pipeline(
          gunzipMembers(file, size, framing, { chunkBytes: ZLIB_CHUNK_BYTES, onRead: (n) => progress.advance(n) }),
          scan.resume(),
        );
        // Byte for byte only when the file is nothing but clean members and nothing was masked.
        if (scan.masked === 0 && byteCopyable(framing)) return { name, path, file, spool: undefined, size, masked: 0 };
      }

      const level = this.obfuscator ? OBFUSCATE_GZIP_LEVEL : GZIP_LEVEL;
      const rewritten = await this.rewriteSegment(file, path, level);
      progress.grow(rewritten.size - size); // what is archived is the redacted copy
      return { name, path, file, ...rewritten };
    } catch (error) {
      await file.close();
      if (error instanceof AgentError) throw error;
      this.fail(path, error);
      return undefined;
    }
  }

  /**
   * Writes the redacted (and, with --obfuscate, obfuscated) content of a segment, re-gzipped
   * at `level`, into the work dir (replacing an earlier copy); a failure reading the source
   * is thrown as it is, one writing the copy as an AgentError.
   */
  private async rewriteSegment(
    file: FileHandle,
    path: string,
    level: number,
  ): Promise<{ spool: string; size: number; masked: number; level: number }> {
    const name = basename(path);
    const { size } = await file.stat();
    const spool = join(this.workDir, name);
    await unlink(spool).catch(() => {});
    const chunkBytes = REWRITE_CHUNK_BYTES;
    const hwm = REWRITE_HIGH_WATER_MARK;
    const redactor = new RedactStream({ extraKeys: this.extraKeys, highWaterMark: hwm });
    this.options.progress.phase(`redacting ${name}`);
    try {
      await pipeline(
        gunzipMembers(file, size, newFraming(), { chunkBytes }),
        redactor,
        ...this.obfuscation(hwm),
        createGzip({ level, memLevel: GZIP_MEM_LEVEL, chunkSize: chunkBytes }),
        createWriteStream(spool, { flags: 'wx', mode: 0o600 }),
      );
    } catch (error) {
      throw this.sourceOrOwnFailure(path, spool, error);
    }
    return { spool, size: (await stat(spool)).size, masked: redactor.masked, level };
  }

  /**
   * A failure writing into the work dir is ours (no space, no permission) and ends the run;
   * any other failure belongs to the source and is recorded by the caller.
   */
  private sourceOrOwnFailure(source: string, spool: string, error: unknown): unknown {
    const e = error as NodeJS.ErrnoException;
    if (e.syscall === 'write' || (e.syscall === 'open' && e.path === spool))
      return new AgentError('redaction', `cannot write the redacted copy of ${source}: ${describeSystemError(error)}`);
    return error;
  }

  private fail(source: string, error: unknown): void {
    const message = error instanceof NotRegularFileError ? `left out: ${error.message}` : describeSystemError(error);
    this.errors.push({ source, message });
  }
}

/** Compiles redaction.extra_keys (already checked by loadConfig); a bad entry is a config error. */
function compileRules(config: AgentConfig): KeyRules {
  try {
    return compileExtraKeys(config.extraKeys);
  } catch (error) {
    throw new AgentError('config', `config file ${config.source}: ${(error as Error).message}`);
  }
}

/**
 * Offset of the first whole line within the newest `budget` bytes of the file (0 when the
 * whole file fits): the oldest part of an oversized log is what gets left out.
 */
export async function newestLineStart(file: FileHandle, size: number, budget: number): Promise<number> {
  if (size <= budget) return 0;
  const from = size - budget;
  const probe = Buffer.alloc(Math.min(64 * 1024, budget));
  let at = from;
  while (at < size) {
    const { bytesRead } = await file.read(probe, 0, probe.length, at);
    if (bytesRead === 0) break;
    const nl = probe.subarray(0, bytesRead).indexOf(10);
    if (nl >= 0) return at + nl + 1;
    at += bytesRead;
  }
  return size;
}

export function jsonBytes(value: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(value, null, 2)}\n`);
}
