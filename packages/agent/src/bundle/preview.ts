// `support-bundle collect --preview` (DESIGN §4, bundles, second round): writes no bundle and
// prints `<member>:<line>: <key or kind>` for every value collect would mask (the attribute
// key) or, with --obfuscate, replace with a token (host, ip, user, email). It reads what
// collect reads, the same way (regular files only, no link followed, the newest part of an
// oversized agent.log), and runs the same rules line by line: LineRedactor is RedactStream's
// state machine without its fast path, and obfuscation runs on each line as redacted, as in
// collect. Every rotated segment is previewed, also one that the size cap would leave out.
// Memory is bounded by the longest line, as in collect.

import type { FileHandle } from 'node:fs/promises';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AGENT_LOG_MEMBER, BUNDLE_CAP_BYTES, rotatedSegmentNumber, SYSTEM_MEMBER } from '@guard/contract/bundle';
import type { CollectionError } from '@guard/contract/manifest';
import type { AgentConfig } from '../config.ts';
import { AgentError, describeSystemError } from '../errors.ts';
import { NotRegularFileError, openRegularFile } from '../regular-file.ts';
import { ZLIB_CHUNK_BYTES } from './archive.ts';
import { jsonBytes, newestLineStart, SMALL_MEMBERS_RESERVE_BYTES } from './collect.ts';
import { gunzipMembers, newFraming } from './gzip-members.ts';
import { readKnownNames } from './known-names.ts';
import { Obfuscator } from './obfuscate.ts';
import { compileExtraKeys, type KeyRules, LineRedactor, MAX_LINE_BYTES } from './redact.ts';
import { collectSystemInfo, type SystemSources } from './system-info.ts';

export interface PreviewOptions {
  config: AgentConfig;
  agentVersion: string;
  now: () => Date;
  sources: SystemSources;
  obfuscate: boolean;
  /** Receives the report's lines (each ends with a newline); awaited for back-pressure. */
  write: (text: string) => Promise<void>;
}

/** What stands for a line too long to scan: collect replaces it whole. */
export const LONG_LINE_FINDING = 'line too long';

export async function previewBundle(options: PreviewOptions): Promise<{ errors: CollectionError[] }> {
  const { config } = options;
  let rules: KeyRules;
  try {
    rules = compileExtraKeys(config.extraKeys);
  } catch (error) {
    throw new AgentError('config', `config file ${config.source}: ${(error as Error).message}`);
  }
  const obfuscator = options.obfuscate ? new Obfuscator(await readKnownNames(options.sources)) : undefined;
  const errors: CollectionError[] = [];
  const fail = (source: string, error: unknown) =>
    errors.push({
      source,
      message: error instanceof NotRegularFileError ? `left out: ${error.message}` : describeSystemError(error),
    });
  const member = (name: string) => new LinePreview(name, rules, obfuscator, options.write);

  // agent.log: the newest part that collect would take.
  await withFile(config.logPath, fail, async (file) => {
    const { size } = await file.stat();
    const start = await newestLineStart(file, size, BUNDLE_CAP_BYTES - SMALL_MEMBERS_RESERVE_BYTES);
    if (size > start)
      await pipeline(
        file.createReadStream({ start, end: size - 1, autoClose: false, highWaterMark: ZLIB_CHUNK_BYTES }),
        member(AGENT_LOG_MEMBER),
      );
  });

  // system.json, when obfuscating (nothing in it is masked).
  if (obfuscator) {
    const { info } = await collectSystemInfo({
      agentVersion: options.agentVersion,
      stateDir: config.stateDir,
      logPath: config.logPath,
      errorLines24h: null,
      now: options.now(),
      sources: options.sources,
    });
    const preview = member(SYSTEM_MEMBER);
    await pipeline(Readable.from([jsonBytes(info)]), preview);
  }

  // Rotated segments, newest first.
  const dir = dirname(config.logPath);
  const base = basename(config.logPath);
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') fail(dir, error);
  }
  const segments = names
    .map((name) => ({ name, n: rotatedSegmentNumber(base, name) }))
    .filter((s): s is { name: string; n: number } => s.n !== undefined)
    .sort((a, b) => a.n - b.n);
  for (const { name } of segments) {
    const path = join(dir, name);
    await withFile(path, fail, async (file) => {
      const { size } = await file.stat();
      await pipeline(gunzipMembers(file, size, newFraming(), { chunkBytes: ZLIB_CHUNK_BYTES }), member(name));
    });
  }
  return { errors };
}

async function withFile(
  path: string,
  fail: (source: string, error: unknown) => void,
  use: (file: FileHandle) => Promise<void>,
): Promise<void> {
  let file: FileHandle;
  try {
    file = await openRegularFile(path);
  } catch (error) {
    fail(path, error);
    return;
  }
  try {
    await use(file);
  } catch (error) {
    if (error instanceof AgentError) throw error;
    fail(path, error);
  } finally {
    await file.close();
  }
}

/** Splits a member into lines and reports, line by line, what collect would mask or replace. */
class LinePreview extends Writable {
  private carry: Buffer = Buffer.alloc(0);
  /** Bytes of an over-long line being skipped, or -1. */
  private skipping = -1;
  private line = 0;
  private readonly redactor: LineRedactor;
  private readonly member: string;
  private readonly obfuscator: Obfuscator | undefined;
  private readonly sink: (text: string) => Promise<void>;

  constructor(
    member: string,
    rules: KeyRules,
    obfuscator: Obfuscator | undefined,
    sink: (text: string) => Promise<void>,
  ) {
    super({ highWaterMark: ZLIB_CHUNK_BYTES });
    this.redactor = new LineRedactor(rules);
    this.member = member;
    this.obfuscator = obfuscator;
    this.sink = sink;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (error?: Error | null) => void): void {
    this.consume(chunk).then(() => done(), done);
  }

  override _final(done: (error?: Error | null) => void): void {
    const last = this.skipping >= 0 ? this.longLine() : this.carry.length > 0 ? this.lineReport(this.carry) : '';
    this.carry = Buffer.alloc(0);
    this.sink(last).then(() => done(), done);
  }

  private async consume(chunk: Buffer): Promise<void> {
    let report = '';
    let at = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, at)) {
      if (this.skipping >= 0) {
        report += this.longLine();
        this.skipping = -1;
      } else if (this.carry.length + nl - at > MAX_LINE_BYTES) {
        this.carry = Buffer.alloc(0);
        report += this.longLine();
      } else {
        const line =
          this.carry.length > 0 ? Buffer.concat([this.carry, chunk.subarray(at, nl)]) : chunk.subarray(at, nl);
        this.carry = Buffer.alloc(0);
        report += this.lineReport(line);
      }
      at = nl + 1;
    }
    const rest = chunk.subarray(at);
    if (this.skipping >= 0) this.skipping += rest.length;
    else if (this.carry.length + rest.length > MAX_LINE_BYTES) {
      this.skipping = this.carry.length + rest.length;
      this.carry = Buffer.alloc(0);
    } else if (rest.length > 0) this.carry = Buffer.concat([this.carry, rest]);
    if (report.length > 0) await this.sink(report);
  }

  private longLine(): string {
    this.line++;
    return `${this.member}:${this.line}: ${LONG_LINE_FINDING}\n`;
  }

  private lineReport(bytes: Buffer): string {
    this.line++;
    const { line, keys } = this.redactor.redact(bytes.toString('latin1'));
    let report = '';
    for (const key of keys) report += `${this.member}:${this.line}: ${printable(key)}\n`;
    if (this.obfuscator)
      for (const found of this.obfuscator.find(line)) report += `${this.member}:${this.line}: ${found.kind}\n`;
    return report;
  }
}

/** A key as printed: one line, no control characters (a key comes from the log itself). */
function printable(key: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing them is the point
  return key.replace(/[\x00-\x1f\x7f]/g, '?');
}
