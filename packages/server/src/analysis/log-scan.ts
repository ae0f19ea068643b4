// Reads one log member (agent.log, or a rotated segment once gunzipped) as it streams past,
// in one pass and bounded memory, and keeps what the findings need: line count, ERROR and WARN
// counts, the most frequent error messages with where they first and last occur, agent
// starts (restarts) and crash traces, and the first and last time the log carries.
//
// Lines are slog text (`time=… level=ERROR msg="…"`) or JSON lines (`"level":"ERROR"`), as
// the agent writes them. Speed comes from not looking at most lines at all: each chunk is
// searched natively (Buffer.indexOf) for a few needles ("ERROR", "WARN", "panic: "…); only the
// lines that contain one are decoded and parsed, and the newlines in between are only counted.
// A line longer than MAX_LINE_BYTES is read as its first MAX_LINE_BYTES.

export const MAX_LINE_BYTES = 64 * 1024;
/** Distinct error messages kept per member; more are counted together. */
export const MAX_MESSAGES = 1000;
const MAX_STARTS = 100;
const MAX_CRASHES = 50;
/** Lines after a crash's first line that still belong to its trace. */
const CRASH_TRACE_LINES = 50;
/** Lines looked at for the member's first time. */
const FIRST_TIME_LINES = 100;

export interface LineRef {
  line: number;
  time?: string;
}

export interface MessageStat {
  /** The message as first seen. */
  message: string;
  count: number;
  first: LineRef;
  last: LineRef;
}

export interface CrashTrace {
  line: number;
  text: string;
  time?: string;
}

export interface LogStats {
  member: string;
  lines: number;
  errors: number;
  warnings: number;
  firstTime?: string;
  lastTime?: string;
  /** Keyed by the message with numbers and hex runs folded (messageKey). */
  messages: Map<string, MessageStat>;
  /** Error lines whose message was not kept (beyond MAX_MESSAGES distinct ones). */
  otherErrors: number;
  starts: LineRef[];
  startCount: number;
  crashes: CrashTrace[];
  crashCount: number;
  longLines: number;
}

// Each needle is one native pass over the text: few, and rare. Buffer.indexOf runs fastest
// when the needle's first byte is rare in logs (measured: "ERROR" 12 ms over 178 MiB,
// "fatal error: " 56 ms). A Go crash trace is `panic: …`, or `fatal error: …` followed by
// `goroutine N [running]:` (the `[` is rare: the fatal error line is found from it); `rting`
// finds the agent's start line, msg "guard-agent starting" (its lines are parsed to be sure).
const ERROR = Buffer.from('ERROR');
const WARN = Buffer.from('WARN');
const RARE_NEEDLES = ['panic: ', 'rting'].map((n) => Buffer.from(n));
const RUNNING = Buffer.from('[running]:');
const FATAL = Buffer.from('fatal error: ');
/** Lines above a goroutine line where its trace's `fatal error: ` line may stand. */
const FATAL_LOOKBACK_LINES = 3;
/** What stands just before a level's value: slog's `level=`, JSON's `"level":"` (or `": "`). */
const LEVEL_PREFIXES = ['level=', '"level":"', '"level": "'].map((p) => Buffer.from(p));

/** The start of the `fatal error: ` line a few lines above a goroutine line, or that line's own start. */
function fatalLineAbove(buf: Buffer, lineStart: number, from: number): number {
  let start = lineStart;
  for (let n = 0; n < FATAL_LOOKBACK_LINES && start > from; n++) {
    start = Math.max(buf.lastIndexOf(NL, start - 2) + 1, from);
    if (buf.compare(FATAL, 0, FATAL.length, start, Math.min(start + FATAL.length, buf.length)) === 0) return start;
  }
  return lineStart;
}

/** Whether the needle at `at` is the value of the level field (not a word in a message). */
function isLevelValue(buf: Buffer, at: number, from: number): boolean {
  for (const p of LEVEL_PREFIXES)
    if (at - p.length >= from && buf.compare(p, 0, p.length, at - p.length, at) === 0) return true;
  return false;
}
const NL = 10;

const SLOG_LEVEL = /(?:^|[ \t])level=("?)([A-Za-z]+)\1(?=[ \t]|$)/;
const SLOG_TIME = /(?:^|[ \t])time=("?)([0-9T:.+\-Zz ]+?)\1(?=[ \t]|$)/;
const SLOG_MSG = /(?:^|[ \t])msg=(?:"((?:[^"\\]|\\.)*)"|([^ \t]*))/;
const JSON_LEVEL = /"level"\s*:\s*"([A-Za-z]+)"/;
const JSON_TIME = /"time"\s*:\s*"([^"]{1,40})"/;
const JSON_MSG = /"msg"\s*:\s*"((?:[^"\\]|\\.){0,1000})"/;
const CRASH = /^(?:panic: |fatal error: )|goroutine \d+ \[running\]:|SIGSEGV|segmentation fault/i;
/** An agent start: msg "guard-agent starting", "agent starting" or "starting" (any case). */
const START = /^(?:guard-agent |agent )?starting\b/i;

interface ParsedLine {
  level?: string;
  time?: string;
  msg?: string;
}

export function parseLine(text: string): ParsedLine {
  if (text.startsWith('{')) {
    const level = JSON_LEVEL.exec(text)?.[1];
    const time = JSON_TIME.exec(text)?.[1];
    const msg = JSON_MSG.exec(text)?.[1];
    return { level, time, msg: msg === undefined ? undefined : unescapeJson(msg) };
  }
  return { level: SLOG_LEVEL.exec(text)?.[2], ...slogTimeAndMessage(text) };
}

/**
 * time and msg of a slog line. The agent's lines begin `time=<RFC 3339> level=… msg=…`: read
 * by position when they do (most ERROR lines of a large log go through here), by regex else.
 */
function slogTimeAndMessage(text: string): { time?: string; msg?: string } {
  let time: string | undefined;
  if (text.startsWith('time=')) {
    const end = text.indexOf(' ', 5);
    time = text.slice(5, end === -1 ? undefined : end);
  } else time = SLOG_TIME.exec(text)?.[2];
  if (time !== undefined && Number.isNaN(Date.parse(time))) time = undefined;
  let msg: string | undefined;
  const at = text.indexOf(' msg=');
  if (at !== -1 && text.charCodeAt(at + 5) === 0x22 /* " */) {
    const close = text.indexOf('"', at + 6);
    if (close !== -1 && text.charCodeAt(close - 1) !== 0x5c /* \ */) msg = text.slice(at + 6, close);
  }
  if (msg === undefined) {
    const m = SLOG_MSG.exec(text);
    msg = m ? (m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]) : undefined;
  }
  return { time, msg };
}

function unescapeJson(s: string): string {
  try {
    return JSON.parse(`"${s}"`) as string;
  } catch {
    return s;
  }
}

/** Messages that differ only in numbers, ids or hex are one message. */
export function messageKey(message: string): string {
  return message
    .slice(0, 500)
    .replace(/\b[0-9a-f]{8,}\b/gi, '#')
    .replace(/\d+/g, '#')
    .trim();
}

/** The figures of a member before a line of it is read. */
export function emptyLogStats(member: string): LogStats {
  return {
    member,
    lines: 0,
    errors: 0,
    warnings: 0,
    messages: new Map(),
    otherErrors: 0,
    starts: [],
    startCount: 0,
    crashes: [],
    crashCount: 0,
    longLines: 0,
  };
}

/** messageKey of the messages seen last: a log repeats its few messages (bounded). */
const KEY_CACHE_SIZE = 4096;

export class LogScanner {
  readonly stats: LogStats;
  /** Bytes of an unfinished line carried into the next chunk (at most MAX_LINE_BYTES). */
  #carry: Buffer[] = [];
  #carryBytes = 0;
  #carryCut = false;
  /** The last complete line seen, for the member's last time. */
  #lastLine: Buffer | undefined;
  #lastCrashLine = -Infinity;
  readonly #keys = new Map<string, string>();

  constructor(member: string) {
    this.stats = emptyLogStats(member);
  }

  push(chunk: Buffer): void {
    let from = 0;
    if (this.#carryBytes > 0 || this.#carryCut) {
      const nl = chunk.indexOf(NL);
      if (nl === -1) {
        this.#keep(chunk);
        return;
      }
      this.#keep(chunk.subarray(0, nl));
      const line = Buffer.concat(this.#carry, this.#carryBytes);
      this.#carry = [];
      this.#carryBytes = 0;
      if (this.#carryCut) this.stats.longLines++;
      this.#carryCut = false;
      this.stats.lines++;
      this.#lookWhole(line, this.stats.lines);
      this.#lastLine = line;
      from = nl + 1;
    }
    const lastNl = chunk.lastIndexOf(NL);
    if (lastNl >= from) {
      this.#region(chunk, from, lastNl + 1);
      from = lastNl + 1;
    }
    if (from < chunk.length) this.#keep(chunk.subarray(from));
  }

  /** The member is over: a last line without a newline still counts. */
  end(): LogStats {
    if (this.#carryBytes > 0 || this.#carryCut) {
      const line = Buffer.concat(this.#carry, this.#carryBytes);
      this.stats.lines++;
      this.#lookWhole(line, this.stats.lines);
      this.#lastLine = line;
      this.#carry = [];
      this.#carryBytes = 0;
    }
    if (this.#lastLine) {
      const t = parseLine(this.#lastLine.toString('utf8')).time;
      if (t) this.stats.lastTime = t;
    }
    return this.stats;
  }

  #keep(bytes: Buffer): void {
    const room = MAX_LINE_BYTES - this.#carryBytes;
    if (bytes.length > room) this.#carryCut = true;
    const take = bytes.subarray(0, Math.max(0, room));
    if (take.length > 0) {
      this.#carry.push(Buffer.from(take));
      this.#carryBytes += take.length;
    }
  }

  /**
   * The complete lines of buf[from, to). A level needle counts only where it is the level
   * field's value (`level=` or `"level":"` just before it); WARN lines are counted on the spot,
   * ERROR lines and the lines of the other needles are parsed.
   */
  #region(buf: Buffer, from: number, to: number): void {
    if (this.stats.firstTime === undefined && this.stats.lines < FIRST_TIME_LINES) this.#firstTime(buf, from, to);
    // Each pass looks at a line once: after a hit it goes on from the line's end, so a line
    // full of needles costs what any line of its length costs (the pass is linear in the text).
    const errors = new Set<number>();
    const others = new Set<number>();
    const lineOf = (at: number) => Math.max(buf.lastIndexOf(NL, at) + 1, from);
    const afterLine = (at: number) => buf.indexOf(NL, at) + 1;
    for (let at = buf.indexOf(ERROR, from); at !== -1 && at < to; ) {
      if (isLevelValue(buf, at, from)) {
        errors.add(lineOf(at));
        at = buf.indexOf(ERROR, afterLine(at));
      } else at = buf.indexOf(ERROR, at + ERROR.length);
    }
    for (let at = buf.indexOf(WARN, from); at !== -1 && at < to; ) {
      if (isLevelValue(buf, at, from)) {
        this.stats.warnings++;
        at = buf.indexOf(WARN, afterLine(at));
      } else at = buf.indexOf(WARN, at + WARN.length);
    }
    for (const needle of RARE_NEEDLES)
      for (let at = buf.indexOf(needle, from); at !== -1 && at < to; at = buf.indexOf(needle, afterLine(at)))
        others.add(lineOf(at));
    for (let at = buf.indexOf(RUNNING, from); at !== -1 && at < to; at = buf.indexOf(RUNNING, afterLine(at)))
      others.add(fatalLineAbove(buf, lineOf(at), from));
    const starts = others.size === 0 ? [...errors] : [...new Set([...errors, ...others])].sort((a, b) => a - b);
    let cursor = from;
    let line = this.stats.lines;
    for (const start of starts) {
      while (cursor < start) {
        cursor = buf.indexOf(NL, cursor) + 1;
        line++;
      }
      const end = buf.indexOf(NL, start);
      this.#look(buf.toString('utf8', start, Math.min(end, start + MAX_LINE_BYTES)), line + 1, errors.has(start));
      if (end - start > MAX_LINE_BYTES) this.stats.longLines++;
    }
    while (cursor < to) {
      cursor = buf.indexOf(NL, cursor) + 1;
      line++;
    }
    this.stats.lines = line;
    const lastStart = buf.lastIndexOf(NL, to - 2) + 1;
    this.#lastLine = Buffer.from(
      buf.subarray(Math.max(lastStart, from), Math.min(to - 1, Math.max(lastStart, from) + MAX_LINE_BYTES)),
    );
  }

  #firstTime(buf: Buffer, from: number, to: number): void {
    let at = from;
    for (let n = this.stats.lines; n < FIRST_TIME_LINES && at < to; n++) {
      const end = buf.indexOf(NL, at);
      const t = parseLine(buf.toString('utf8', at, Math.min(end, at + 4096))).time;
      if (t) {
        this.stats.firstTime = t;
        return;
      }
      at = end + 1;
    }
  }

  /** A line that finished a carried one: its level is read by parsing it. */
  #lookWhole(bytes: Buffer, lineNo: number): void {
    const text = bytes.toString('utf8');
    const upper = parseLine(text).level?.toUpperCase();
    if (upper === 'WARN' || upper === 'WARNING') this.stats.warnings++;
    this.#look(text, lineNo, upper === 'ERROR');
  }

  /** A line that holds a needle: an ERROR line (by its level), a crash, an agent start. */
  #look(text: string, lineNo: number, isError: boolean): void {
    if (this.stats.firstTime === undefined && lineNo <= FIRST_TIME_LINES) {
      const t = parseLine(text).time;
      if (t) this.stats.firstTime = t;
    }
    if (CRASH.test(text)) {
      if (lineNo - this.#lastCrashLine > CRASH_TRACE_LINES) {
        this.stats.crashCount++;
        if (this.stats.crashes.length < MAX_CRASHES)
          this.stats.crashes.push({ line: lineNo, text: text.slice(0, 300).trim(), time: parseLine(text).time });
      }
      this.#lastCrashLine = lineNo;
    }
    if (!isError && !text.includes('rting')) return;
    const { time, msg } = parseLine(text);
    if (isError) {
      this.stats.errors++;
      this.#message(msg ?? text.slice(0, 200), { line: lineNo, time });
    }
    if (msg !== undefined && START.test(msg)) {
      this.stats.startCount++;
      if (this.stats.starts.length < MAX_STARTS) this.stats.starts.push({ line: lineNo, time });
    }
  }

  #message(message: string, at: LineRef): void {
    // messageKey reads a message's first 500 characters: the cache is keyed by them (bounded).
    const head = message.length > 500 ? message.slice(0, 500) : message;
    let key = this.#keys.get(head);
    if (key === undefined) {
      key = messageKey(head);
      if (this.#keys.size >= KEY_CACHE_SIZE) this.#keys.clear();
      this.#keys.set(head, key);
    }
    const known = this.stats.messages.get(key);
    if (known) {
      known.count++;
      known.last = at;
      return;
    }
    if (this.stats.messages.size >= MAX_MESSAGES) {
      this.stats.otherErrors++;
      return;
    }
    this.stats.messages.set(key, { message: message.slice(0, 500), count: 1, first: at, last: at });
  }
}
