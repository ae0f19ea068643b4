// Redaction of log members (DESIGN §3, contract — redaction).
//
// The value of every attribute whose key matches REDACTION_PATTERN (or one of the operator's
// extra keys, `redaction.extra_keys`) is replaced by `[REDACTED]`; nothing else changes, and
// no line is added or removed. One scanner serves every line shape, so a line that is not
// valid slog text or JSON is still scanned:
//
//   slog text      key=value  key="quoted \" value"  key='single quoted'  group.client_secret=v
//   JSON           "key": <string | number | literal | object | array>, at any depth
//   escaped JSON   \"key\":\"v\"  (a JSON document logged inside a string)
//
// A key matches when the whole key or its last dotted segment matches; JSON keys are
// compared after unescaping (`"api\u005fkey"` is `api_key`). A quoted value that is not
// closed on its line runs on over the following lines until its closing quote, and those
// lines are masked too (see redactLineIn).
//
// Lines are handled as latin1 strings: one char per byte, so bytes that are not valid UTF-8
// survive untouched and every syntax character (all ASCII) is found exactly.

import { Transform, type TransformCallback } from 'node:stream';
import { REDACTED_VALUE, REDACTION_PATTERN } from '@guard/contract/bundle';
import { type KeyRules, NO_EXTRA_KEYS, rulesOf } from '../redaction-keys.ts';

export { compileExtraKeys, type KeyRules, MAX_EXTRA_KEY_CHARS, MAX_EXTRA_KEYS } from '../redaction-keys.ts';

/**
 * Every matching key contains one of these substrings, or is a JSON key written with a `\u`
 * escape, so a line without any of them needs no regex at all. This is what lets clean log
 * text pass at memory speed. (A line continuing a value open on the line before is scanned
 * whatever it holds.)
 */
const KEY_HINTS = ['_token', '_secret', 'api_key', '\\u'];

/** Longest line the redactor holds in memory; longer lines are replaced (see LONG_LINE). */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

/**
 * Lines a quoted value may run on over after the line that opened it (a 4096-bit PEM key is
 * 51 lines, a chain of a few certificates ~100); past them the value is taken as closed and
 * the following lines are scanned as usual.
 */
export const MAX_VALUE_LINES = 256;

/** What replaces a line longer than MAX_LINE_BYTES: it cannot be scanned, so it never passes. */
export function longLineMarker(bytes: number): string {
  return `[REDACTED: line of ${bytes} bytes exceeds the ${MAX_LINE_BYTES}-byte redaction limit]`;
}

// Candidate keys: a quoted JSON key (optionally with escaped quotes) followed by a colon, or
// a bare slog key followed by `=`. A key never contains a quote, escaped or not, so a
// candidate cannot run across two strings. The lookbehind lets a bare key start only where a
// run of key characters starts, which keeps the scan linear on long unbroken runs.
// Whitespace is spelled out: `\s` would also match bytes 0x85 and 0xA0, which are UTF-8
// continuation bytes in a latin1 string.
const CANDIDATE = /(\\?)"((?:[^"\\\n]|\\[^"\n])*?)\1"[ \t]*:[ \t]*|(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]+)=/g;
const SPACE = new Set([' ', '\t', '\r', '\f', '\v']);

/** Whether `key` (or its last dotted segment) matches the contract's pattern or an extra rule. */
export function keyMatches(key: string, rules: KeyRules = NO_EXTRA_KEYS): boolean {
  const dot = key.lastIndexOf('.');
  const last = dot >= 0 ? key.slice(dot + 1) : undefined;
  if (REDACTION_PATTERN.test(key) || (last !== undefined && REDACTION_PATTERN.test(last))) return true;
  const { names, patterns } = rulesOf(rules);
  if (names.size > 0 && (names.has(key.toLowerCase()) || (last !== undefined && names.has(last.toLowerCase()))))
    return true;
  for (const pattern of patterns) if (pattern.test(key) || (last !== undefined && pattern.test(last))) return true;
  return false;
}

const JSON_ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

function unescapeJson(s: string): string {
  return s.replace(/\\(u[0-9A-Fa-f]{4}|[^u])/g, (_, e: string) =>
    e.length === 5 ? String.fromCharCode(Number.parseInt(e.slice(1), 16)) : (JSON_ESCAPES[e] ?? e),
  );
}

/**
 * The key a JSON candidate names, as its writer meant it: `"api\u005fkey"` is `api_key`.
 * Inside a string (`\"key\":`) two layers of escaping are undone. Bytes are read as UTF-8,
 * so extra patterns see the same text whether a character was escaped or not.
 */
function jsonKeyName(raw: string, escaped: boolean): string {
  const text = /[\x80-\xff]/.test(raw) ? Buffer.from(raw, 'latin1').toString('utf8') : raw;
  if (!text.includes('\\')) return text;
  return escaped ? unescapeJson(unescapeJson(text)) : unescapeJson(text);
}

export interface LineRedaction {
  line: string;
  masked: number;
}

/** A line's redaction with the key of each value masked, in order (for `collect --preview`). */
export interface KeyedLineRedaction extends LineRedaction {
  /** A value run on from a line before keeps the key that opened it. */
  keys: string[];
}

/** Redacts one line (no newline inside). Pure; the unit of the golden and property tests. */
export function redactLine(text: string, rules: KeyRules = NO_EXTRA_KEYS): LineRedaction {
  const { line, masked } = redactLineIn(text, rules, undefined);
  return { line, masked };
}

/** The quote that opened a value: `"`, `'`, or `\"` for a string written inside a string. */
type Quote = '"' | "'" | '\\"';

/** A value still open where a line ends: the following lines continue it. */
type OpenValue =
  /** A quoted value whose closing quote is not on this line. */
  | { kind: 'string'; quote: Quote; key: string }
  /** `"key":` ended the line: the JSON value starts on the next line that is not blank. */
  | { kind: 'json-value'; escaped: boolean; key: string };

interface Edit {
  start: number;
  end: number;
  text: string;
  key: string;
}

/**
 * Redacts one line, given the value left open by the line before it (if any), and returns
 * the value this line leaves open. A line that continues a value is masked up to the value's
 * closing quote, and then scanned twice: on from that quote, and afresh from its start, in
 * case the quote was not the closing one (a stray opening quote on an earlier line); both
 * readings' masks are applied, so a misread quote can cost text, never a secret.
 *
 * A value runs on for at most MAX_VALUE_LINES lines (the stream enforces it): enough for a PEM
 * key or a certificate chain, while a stray quote after a matching key costs a bounded part of
 * the log, not the rest of the member. Memory is bounded either way: between lines the stream
 * carries only the kind of quote, never the value.
 */
function redactLineIn(
  text: string,
  rules: KeyRules,
  open: OpenValue | undefined,
): KeyedLineRedaction & { open: OpenValue | undefined } {
  // A CRLF line's CR belongs to no value: an unterminated quoted secret must not eat it.
  const cr = text.endsWith('\r');
  const line = cr ? text.slice(0, -1) : text;
  const edits: Edit[] = [];
  let next: OpenValue | undefined;
  if (open === undefined) {
    next = scanPairs(line, 0, rules, edits);
  } else {
    let resume = 0;
    if (open.kind === 'string') {
      const close = stringEnd(line, 0, open.quote);
      if (close < 0) {
        // Still inside: the whole line is part of the value.
        if (line.length > 0) edits.push({ start: 0, end: line.length, text: REDACTED_VALUE, key: open.key });
        return applyEdits(text, line, cr, edits, open);
      }
      if (close > 0) edits.push({ start: 0, end: close, text: REDACTED_VALUE, key: open.key });
      resume = close;
    } else {
      let start = 0;
      while (start < line.length && SPACE.has(line[start])) start++;
      if (start === line.length) return applyEdits(text, line, cr, edits, open); // blank: still waiting
      const span = jsonValueEnd(line, start, open.escaped, open.key);
      if (span.end > start)
        edits.push({ start, end: span.end, text: `${span.quote}${REDACTED_VALUE}${span.quote}`, key: open.key });
      if (span.open) return applyEdits(text, line, cr, edits, span.open);
      resume = span.end;
    }
    next = scanPairs(line, resume, rules, edits) ?? scanPairs(line, 0, rules, edits);
  }
  return applyEdits(text, line, cr, edits, next);
}

/**
 * Finds the matching pairs of line[from...] and adds the edits masking their values; returns
 * the value left open at the end of the line, if any.
 */
function scanPairs(line: string, from: number, rules: KeyRules, edits: Edit[]): OpenValue | undefined {
  let open: OpenValue | undefined;
  CANDIDATE.lastIndex = from;
  for (let m = CANDIDATE.exec(line); m !== null; m = CANDIDATE.exec(line)) {
    const rawJsonKey = m[2];
    const escaped = m[1] === '\\';
    const key = rawJsonKey === undefined ? m[3] : jsonKeyName(rawJsonKey, escaped);
    const valueStart = m.index + m[0].length;
    if (!keyMatches(key, rules)) {
      // Keep scanning inside the value (`msg="retry api_key=abc"` carries a pair too), and
      // inside what looked like a JSON key: it may be the text between two slog strings,
      // as in `a="x" api_key=s err=": reset"`.
      if (rawJsonKey !== undefined) CANDIDATE.lastIndex = m.index + m[1].length + 1;
      continue;
    }
    const span =
      rawJsonKey === undefined
        ? slogValueEnd(line, valueStart, m.index, key)
        : jsonValueEnd(line, valueStart, escaped, key);
    open = span.open;
    if (span.end === valueStart) continue; // `api_key=` with nothing after it
    edits.push({ start: valueStart, end: span.end, text: `${span.quote}${REDACTED_VALUE}${span.quote}`, key });
    CANDIDATE.lastIndex = span.end;
  }
  return open;
}

/**
 * Applies the edits (overlapping ones, from two readings of a line, merge into one mask) and
 * counts the values masked; a value that already reads `[REDACTED]` is neither changed nor
 * counted.
 */
function applyEdits(
  text: string,
  line: string,
  cr: boolean,
  edits: Edit[],
  open: OpenValue | undefined,
): KeyedLineRedaction & { open: OpenValue | undefined } {
  edits.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let copied = 0;
  let masked = 0;
  const keys: string[] = [];
  for (let i = 0; i < edits.length; i++) {
    const { start } = edits[i];
    let { end, text: mask } = edits[i];
    while (i + 1 < edits.length && edits[i + 1].start < end) {
      i++;
      if (edits[i].end > end) {
        end = edits[i].end;
        mask = REDACTED_VALUE;
      }
    }
    if (line.slice(start, end) === mask) continue;
    out += line.slice(copied, start) + mask;
    copied = end;
    masked++;
    keys.push(edits[i].key);
  }
  if (masked === 0) return { line: text, masked, keys, open };
  return { line: out + line.slice(copied) + (cr ? '\r' : ''), masked, keys, open };
}

interface ValueSpan {
  end: number;
  /** Quote put around the mask: the value's own in slog; for JSON `"`, or `\"` inside a string. */
  quote: string;
  /** Set when the value runs past the end of the line (then `end` is the line's length). */
  open?: OpenValue;
}

function slogValueEnd(line: string, start: number, keyStart: number, key: string): ValueSpan {
  if (line.startsWith('\\"', start)) return stringSpan(line, start + 2, '\\"', '\\"', key);
  const q = line[start];
  if (q === '"' || q === "'") {
    // `msg="config lacks api_key=" user=bob`: a quote that is never closed on its line,
    // followed by whitespace or nothing, inside a string opened before the key, closes that
    // string; the value is empty. Anywhere else it opens a value.
    if (
      quotedEnd(line, start + 1, q) < 0 &&
      (start + 1 === line.length || SPACE.has(line[start + 1])) &&
      insideQuotes(line, keyStart, q)
    )
      return { end: start, quote: '' };
    return stringSpan(line, start + 1, q, q, key);
  }
  let i = start;
  while (i < line.length && !SPACE.has(line[i]) && line[i] !== '"') i++;
  return { end: i, quote: '' };
}

function jsonValueEnd(line: string, start: number, escaped: boolean, key: string): ValueSpan {
  if (start === line.length) return { end: start, quote: '', open: { kind: 'json-value', escaped, key } };
  // Inside a string, the mask must be an escaped string too, or it would end that string.
  const quote = escaped ? '\\"' : '"';
  if (escaped && line.startsWith('\\"', start)) return stringSpan(line, start + 2, '\\"', quote, key);
  const c = line[start];
  if (c === '"' && !escaped) return stringSpan(line, start + 1, '"', quote, key);
  if (c === "'" && !escaped) return stringSpan(line, start + 1, "'", "'", key);
  if (c === '{' || c === '[') return { end: containerEnd(line, start, escaped), quote };
  let i = start;
  while (i < line.length && !SPACE.has(line[i]) && !',}]"\\'.includes(line[i])) i++;
  return { end: i, quote };
}

/** The span of a string opened with `opener` before `from`; open when unclosed on this line. */
function stringSpan(line: string, from: number, opener: Quote, quote: string, key: string): ValueSpan {
  const end = stringEnd(line, from, opener);
  if (end >= 0) return { end, quote };
  return { end: line.length, quote, open: { kind: 'string', quote: opener, key } };
}

function stringEnd(line: string, from: number, opener: Quote): number {
  return opener === '\\"' ? escapedStringEnd(line, from) : quotedEnd(line, from, opener);
}

/** Index after the closing `q` of a string opened before `from`, or -1 if it is not closed. */
function quotedEnd(line: string, from: number, q: string): number {
  for (let i = from; i < line.length; i++) {
    if (line[i] === '\\') i++;
    else if (line[i] === q) return i + 1;
  }
  return -1;
}

/** Whether line[0, end) leaves a `q` string open (an odd number of unescaped `q`). */
function insideQuotes(line: string, end: number, q: string): boolean {
  let inside = false;
  for (let i = 0; i < end; i++) {
    if (line[i] === '\\') i++;
    else if (line[i] === q) inside = !inside;
  }
  return inside;
}

/**
 * Index after the closing `\"` of a string written inside another string, or -1 if it is not
 * closed on this line. Two layers of escaping: the outer one is decoded on the fly (`\\` →
 * `\`, `\"` → `"`), and the inner string ends at the first decoded quote that the inner layer
 * does not escape. A raw `"` ends the enclosing string, so the inner one stops there.
 */
function escapedStringEnd(line: string, from: number): number {
  let innerEscape = false;
  for (let i = from; i < line.length; i++) {
    let ch = line[i];
    if (ch === '"') return i;
    if (ch === '\\' && i + 1 < line.length) ch = line[++i];
    if (innerEscape) innerEscape = false;
    else if (ch === '\\') innerEscape = true;
    else if (ch === '"') return i + 1;
  }
  return -1;
}

/**
 * Index after the bracket closing the object or array at `start`. When unbalanced: the end
 * of the line, or, for a container written inside a string, the quote that ends that string.
 */
function containerEnd(line: string, start: number, escaped: boolean): number {
  let depth = 0;
  for (let i = start; i < line.length; i++) {
    const c = line[i];
    if (escaped && c === '\\') {
      if (line[i + 1] !== '"') i++;
      else {
        const end = escapedStringEnd(line, i + 2);
        if (end < 0) return line.length;
        i = end - 1;
      }
    } else if (c === '"') {
      if (escaped) return i;
      const end = quotedEnd(line, i + 1, '"');
      if (end < 0) return line.length;
      i = end - 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return line.length;
}

/**
 * A substring every line worth scanning contains. An extra name matches in any case, so it
 * is found through a two-char window of it: each case spelling of that window is searched as
 * its own needle (at most four), and a hit counts only if a whole name is there, in any
 * case. This keeps the search in native indexOf instead of lowercasing every chunk.
 */
interface Hint {
  needle: Buffer;
  /** For extra names: each name (lowercased) this needle is a window of, and where. */
  names?: { name: string; offset: number }[];
}

/** Letters frequent in log text: a window starting with one is found slowly and hit often. */
const FREQUENT_LETTERS = new Set('etaoinsrhldcupm');

/** Where to take a name's search window: the two chars least likely to occur in logs. */
function windowOffset(name: string): number {
  const cost = (c: string) => (FREQUENT_LETTERS.has(c) ? 3 : /[a-z]/.test(c) ? 1 : 0);
  let offset = 0;
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i + 2 <= name.length; i++) {
    const c = cost(name[i]) + cost(name[i + 1]);
    if (c < best) [best, offset] = [c, i];
  }
  return offset;
}

/** Every case spelling of `text` (letters only vary). */
function caseSpellings(text: string): string[] {
  let spellings = [''];
  for (const c of text) {
    const cases = c === c.toUpperCase() ? [c] : [c, c.toUpperCase()];
    spellings = spellings.flatMap((s) => cases.map((k) => s + k));
  }
  return spellings;
}

/** First index >= from where `hint` is found in buf[.., end), or -1. */
function findHint(buf: Buffer, hint: Hint, from: number, end: number): number {
  for (let at = buf.indexOf(hint.needle, from); at >= 0 && at < end; at = buf.indexOf(hint.needle, at + 1)) {
    if (hint.names === undefined || hint.names.some(({ name, offset }) => nameAt(buf, at - offset, end, name)))
      return at;
  }
  return -1;
}

/** Whether buf[start, ...) spells `name` (lowercase ASCII) in any case, before `end`. */
function nameAt(buf: Buffer, start: number, end: number, name: string): boolean {
  if (start < 0 || start + name.length > end) return false;
  for (let k = 0; k < name.length; k++) {
    const b = buf[start + k];
    if ((b >= 65 && b <= 90 ? b | 32 : b) !== name.charCodeAt(k)) return false;
  }
  return true;
}

/** Which lines a stream must scan: the ones holding a hint, or all of them. */
interface LineFilter {
  hints: readonly Hint[];
  /** Extra patterns can match any key, so no substring rules a line out. */
  everyLine: boolean;
}

function lineFilter(rules: KeyRules): LineFilter {
  const { names, patterns } = rulesOf(rules);
  const windows = new Map<string, { name: string; offset: number }[]>();
  for (const name of names) {
    const offset = windowOffset(name);
    for (const spelling of caseSpellings(name.slice(offset, offset + 2))) {
      const list = windows.get(spelling) ?? [];
      list.push({ name, offset });
      windows.set(spelling, list);
    }
  }
  const hints: Hint[] = KEY_HINTS.map((h) => ({ needle: Buffer.from(h, 'latin1') }));
  for (const [spelling, list] of windows) hints.push({ needle: Buffer.from(spelling, 'latin1'), names: list });
  return { hints, everyLine: patterns.length > 0 };
}

export interface LineObserver {
  /** Sees every complete line that contains `needle` (before redaction); used to count errors. */
  needle: Buffer;
  onLine(line: Buffer): void;
}

export interface RedactStreamOptions {
  /** Count only; push nothing (the scan that decides whether a segment is copied as it is). */
  discard?: boolean;
  observer?: LineObserver;
  /** The operator's `redaction.extra_keys`, masked on top of the contract's pattern. */
  extraKeys?: KeyRules;
  /** Bytes buffered on each side before backpressure (default 1 MiB). */
  highWaterMark?: number;
}

/**
 * Streaming redactor: bytes in, redacted bytes out, memory bounded by MAX_LINE_BYTES.
 * With `discard`, nothing is pushed and only `masked` is counted (the scan pass that decides
 * whether a rotated segment can be copied byte for byte).
 */
export class RedactStream extends Transform {
  masked = 0;
  private carry: Buffer = Buffer.alloc(0);
  /** Bytes of an over-long line being skipped, or -1 when not inside one. */
  private skipping = -1;
  private readonly discard: boolean;
  private readonly observer: LineObserver | undefined;
  private readonly rules: KeyRules;
  private readonly scope: LineFilter;
  /** The value the last line scanned left open: the next line continues it. */
  private open: OpenValue | undefined;
  /** Lines in a row that ended inside an open value (bounded by MAX_VALUE_LINES). */
  private openLines = 0;

  constructor(options: RedactStreamOptions = {}) {
    super({ highWaterMark: options.highWaterMark ?? 1 << 20 });
    this.discard = options.discard ?? false;
    this.observer = options.observer;
    this.rules = options.extraKeys ?? NO_EXTRA_KEYS;
    this.scope = lineFilter(this.rules);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let buf = chunk;
    if (this.skipping >= 0) {
      const nl = buf.indexOf(10);
      if (nl < 0) {
        this.skipping += buf.length;
        done();
        return;
      }
      this.emitLongLine(this.skipping + nl);
      this.skipping = -1;
      buf = buf.subarray(nl); // keeps the newline
    }
    if (this.carry.length > 0) {
      // Finish the carried line with the head of this chunk, and copy only that line: the
      // rest of the chunk is processed in place (concatenating whole chunks doubled the
      // bytes allocated per chunk).
      const nl = buf.indexOf(10);
      if (nl < 0) {
        this.holdPartialLine(Buffer.concat([this.carry, buf]));
        done();
        return;
      }
      const line = Buffer.concat([this.carry, buf.subarray(0, nl + 1)]);
      this.carry = Buffer.alloc(0);
      if (line.length - 1 > MAX_LINE_BYTES) {
        this.emitLongLine(line.length - 1);
        this.out(Buffer.from('\n'));
      } else this.processLines(line, line.length);
      buf = buf.subarray(nl + 1);
    }
    const lastNl = buf.lastIndexOf(10);
    if (lastNl < 0) {
      this.holdPartialLine(buf);
      done();
      return;
    }
    this.processLines(buf, lastNl + 1);
    this.holdPartialLine(buf.subarray(lastNl + 1));
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.skipping >= 0) this.emitLongLine(this.skipping);
    else if (this.carry.length > 0) this.processLines(this.carry, this.carry.length);
    this.carry = Buffer.alloc(0);
    this.open = undefined;
    this.openLines = 0;
    done();
  }

  private holdPartialLine(rest: Buffer): void {
    if (rest.length > MAX_LINE_BYTES) {
      this.carry = Buffer.alloc(0);
      this.skipping = rest.length;
    } else {
      // Copy so the carry does not pin the whole (possibly 1 MiB) chunk it came from.
      this.carry = rest.length > 0 ? Buffer.from(rest) : Buffer.alloc(0);
    }
  }

  private emitLongLine(bytes: number): void {
    this.masked++;
    this.out(Buffer.from(longLineMarker(bytes), 'latin1'));
  }

  /**
   * Redacts buf[0, end), which ends at a line boundary (or at the end of the input). Visits
   * only the lines that hold a hint, found by one search pass per hint over the buffer rather
   * than per line; everything else is passed on as slices of the input, uncopied.
   */
  private processLines(buf: Buffer, end: number): void {
    if (this.observer) this.observeLines(buf, end);
    const { hints, everyLine } = this.scope;
    // Only a buffer longer than the limit can hold an over-long line (the carry holds at most
    // MAX_LINE_BYTES): there every line is visited, so that none passes unmeasured.
    const visitAll = everyLine || end > MAX_LINE_BYTES;
    const next = visitAll ? [] : hints.map((h) => findHint(buf, h, 0, end));
    let copied = 0;
    let pos = 0;
    while (pos < end) {
      let lineStart = pos;
      if (!visitAll && this.open === undefined) {
        let at = -1;
        for (let i = 0; i < next.length; i++) {
          if (next[i] >= 0 && next[i] < pos) next[i] = findHint(buf, hints[i], pos, end);
          if (next[i] >= 0 && next[i] < end && (at < 0 || next[i] < at)) at = next[i];
        }
        if (at < 0) break;
        lineStart = at === pos ? pos : buf.lastIndexOf(10, at - 1) + 1;
      }
      let lineEnd = buf.indexOf(10, lineStart);
      if (lineEnd < 0 || lineEnd > end) lineEnd = end;
      if (lineEnd - lineStart > MAX_LINE_BYTES) {
        this.out(buf.subarray(copied, lineStart));
        this.emitLongLine(lineEnd - lineStart);
        copied = lineEnd;
      } else if (
        this.open !== undefined ||
        everyLine ||
        !visitAll ||
        hints.some((h) => findHint(buf, h, lineStart, lineEnd) >= 0)
      ) {
        copied = this.redactLineAt(buf, lineStart, lineEnd, copied);
      }
      pos = lineEnd + 1;
    }
    this.out(buf.subarray(copied, end));
  }

  /**
   * Redacts the line buf[lineStart, lineEnd). When something was masked, pushes the input
   * not yet pushed (from `copied`) and the redacted line; returns the new `copied`.
   */
  private redactLineAt(buf: Buffer, lineStart: number, lineEnd: number, copied: number): number {
    const { line, masked, open } = redactLineIn(buf.toString('latin1', lineStart, lineEnd), this.rules, this.open);
    this.openLines = open === undefined ? 0 : this.openLines + 1;
    this.open = this.openLines > MAX_VALUE_LINES ? undefined : open;
    if (this.open === undefined) this.openLines = 0;
    if (masked === 0) return copied;
    this.out(buf.subarray(copied, lineStart));
    this.out(Buffer.from(line, 'latin1'));
    this.masked += masked;
    return lineEnd;
  }

  private observeLines(buf: Buffer, end: number): void {
    const { needle, onLine } = this.observer as LineObserver;
    let at = buf.indexOf(needle, 0);
    while (at >= 0 && at < end) {
      const start = buf.lastIndexOf(10, at) + 1;
      let lineEnd = buf.indexOf(10, at);
      if (lineEnd < 0 || lineEnd > end) lineEnd = end;
      onLine(buf.subarray(start, lineEnd));
      at = buf.indexOf(needle, lineEnd);
    }
  }

  private out(bytes: Buffer): void {
    if (!this.discard && bytes.length > 0) this.push(bytes);
  }
}

/**
 * The redactor one line at a time, with the same state RedactStream carries between lines (a
 * value left open runs on for at most MAX_VALUE_LINES lines). `collect --preview` uses it to
 * say which key each masked value belonged to, line by line; RedactStream is the same rules
 * with a faster path over lines that cannot match.
 */
export class LineRedactor {
  private open: OpenValue | undefined;
  private openLines = 0;
  private readonly rules: KeyRules;

  constructor(extraKeys: KeyRules = NO_EXTRA_KEYS) {
    this.rules = extraKeys;
  }

  /** Redacts one line (latin1, no newline). */
  redact(text: string): KeyedLineRedaction {
    const { line, masked, keys, open } = redactLineIn(text, this.rules, this.open);
    this.openLines = open === undefined ? 0 : this.openLines + 1;
    this.open = this.openLines > MAX_VALUE_LINES ? undefined : open;
    if (this.open === undefined) this.openLines = 0;
    return { line, masked, keys };
  }
}
