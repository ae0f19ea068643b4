// The daemon's log: one line per event, slog-style — `time=… level=INFO msg="…" key=value` —
// on stderr (journald keeps it) and appended to log_path (DESIGN §3: so a support bundle holds
// what the agent did). The file is reopened when logrotate moved it away (a new inode at the
// path, or none) and written at its end after copytruncate emptied it (O_APPEND). Values from
// the other side (the service's messages) are stripped of control characters.

import { closeSync, fstatSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
export type LogAttrs = Record<string, string | number | boolean | null | undefined>;

export interface DaemonLog {
  info(msg: string, attrs?: LogAttrs): void;
  warn(msg: string, attrs?: LogAttrs): void;
  error(msg: string, attrs?: LogAttrs): void;
}

/** A value as slog's text handler writes it: bare when it can be, else quoted. */
export function logValue(value: string | number | boolean | null): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  const text = String(value).replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return /^[^\s"=\\]+$/.test(text) ? text : JSON.stringify(text);
}

export function formatLine(at: Date, level: LogLevel, msg: string, attrs: LogAttrs = {}): string {
  const parts = [`time=${at.toISOString()}`, `level=${level}`, `msg=${logValue(msg)}`];
  for (const [key, value] of Object.entries(attrs)) if (value !== undefined) parts.push(`${key}=${logValue(value)}`);
  return `${parts.join(' ')}\n`;
}

/** How often at most the path is checked for a rotation. */
const REOPEN_CHECK_MS = 1000;

/** log_path, appended to; reopened after a rotation. Write failures go to stderr, once per kind. */
export class LogFile {
  readonly #path: string;
  readonly #complain: (message: string) => void;
  readonly #clock: () => number;
  #fd: number | undefined;
  #checked = 0;
  #failed: string | undefined;

  constructor(path: string, complain: (message: string) => void, clock: () => number = Date.now) {
    this.#path = path;
    this.#complain = complain;
    this.#clock = clock;
  }

  #open(): void {
    mkdirSync(dirname(this.#path), { recursive: true, mode: 0o750 });
    this.#fd = openSync(this.#path, 'a', 0o640);
  }

  #rotated(): boolean {
    if (this.#fd === undefined) return true;
    try {
      return statSync(this.#path).ino !== fstatSync(this.#fd).ino;
    } catch {
      return true; // moved away and not recreated
    }
  }

  write(line: string): void {
    try {
      const now = this.#clock();
      if (this.#fd === undefined || (now - this.#checked >= REOPEN_CHECK_MS && this.#rotated())) {
        this.#checked = now;
        this.close();
        this.#open();
      }
      writeSync(this.#fd as number, line);
      this.#failed = undefined;
    } catch (error) {
      const message = `guard-agent: cannot write the log file ${this.#path}: ${(error as Error).message}`;
      if (this.#failed !== message) this.#complain(`${message}\n`);
      this.#failed = message;
      this.close();
    }
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

export function createLog(stream: NodeJS.WritableStream, now: () => Date, file?: LogFile): DaemonLog {
  const write = (level: LogLevel) => (msg: string, attrs?: LogAttrs) => {
    const line = formatLine(now(), level, msg, attrs);
    stream.write(line);
    file?.write(line);
  };
  return { info: write('INFO'), warn: write('WARN'), error: write('ERROR') };
}
