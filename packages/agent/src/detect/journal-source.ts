// `auth_log: journal`: the systemd journal instead of a syslog file. journalctl follows the
// journal with the three programs' messages only (matches on SYSLOG_IDENTIFIER are OR-ed),
// one JSON object per entry; each entry's __CURSOR is the position kept in the store, so a
// restart resumes after the last entry read (--after-cursor) and the first start reads the
// entries from its own second on (--since=@<seconds>: none written while journalctl opens is lost).

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { MAX_LINE_CHARS } from './auth-lines.ts';

export interface JournalEntry {
  program: string;
  message: string;
  at: Date;
}

export interface JournalOptions {
  /** The last cursor read, from the store; undefined: from `since` on. */
  cursor: string | undefined;
  /** The first start's time (kept by the caller until a cursor is). */
  since: Date;
  onEntries: (entries: JournalEntry[], cursor: string) => Promise<void> | void;
  onProblem: (message: string | undefined) => void;
  signal: AbortSignal;
  /** Extra journalctl arguments (tests read a journal file with --file). */
  extraArgs?: readonly string[];
  journalctl?: string;
}

const PROGRAMS = ['sudo', 'sshd', 'useradd'];

/** MESSAGE is a string, or an array of bytes when it is not valid UTF-8. */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((b) => Number.isInteger(b)))
    return Buffer.from(value as number[]).toString('utf8');
  return undefined;
}

export function parseJournalLine(line: string): { entry: JournalEntry | undefined; cursor: string } | undefined {
  if (line.length > MAX_LINE_CHARS * 4) return undefined;
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const cursor = doc.__CURSOR;
  if (typeof cursor !== 'string') return undefined;
  const program = text(doc.SYSLOG_IDENTIFIER);
  const message = text(doc.MESSAGE);
  const micros = Number(doc.__REALTIME_TIMESTAMP);
  if (program === undefined || message === undefined) return { entry: undefined, cursor };
  return {
    entry: { program, message, at: Number.isFinite(micros) ? new Date(micros / 1000) : new Date() },
    cursor,
  };
}

/** Runs journalctl until the signal aborts; resolves when it ends (the caller restarts it after a pause). */
export function followJournal(options: JournalOptions): Promise<void> {
  const args = [
    '--follow',
    '--output=json',
    '--no-pager',
    '--quiet',
    ...(options.cursor
      ? [`--after-cursor=${options.cursor}`]
      : [`--since=@${Math.floor(options.since.getTime() / 1000)}`]),
    ...(options.extraArgs ?? []),
    ...PROGRAMS.flatMap((p, i) => (i === 0 ? [`SYSLOG_IDENTIFIER=${p}`] : ['+', `SYSLOG_IDENTIFIER=${p}`])),
  ];
  return new Promise((resolve) => {
    const child = spawn(options.journalctl ?? 'journalctl', args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: options.signal,
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      if (stderr.length < 2000) stderr += d;
    });
    const lines = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY });
    let chain = Promise.resolve();
    let reading = false;
    lines.on('line', (line) => {
      const parsed = parseJournalLine(line);
      if (!parsed) return;
      if (!reading) {
        reading = true;
        options.onProblem(undefined);
      }
      const entries = parsed.entry ? [parsed.entry] : [];
      chain = chain.then(() => options.onEntries(entries, parsed.cursor));
    });
    child.on('spawn', () => options.onProblem(undefined));
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (options.signal.aborted) return;
      options.onProblem(
        error.code === 'ENOENT' ? 'journalctl was not found (auth_log: journal needs systemd)' : error.message,
      );
    });
    child.on('close', (code) => {
      void chain.then(() => {
        if (!options.signal.aborted && code !== null && code !== 0)
          options.onProblem(`journalctl exited with ${code}: ${stderr.trim().slice(0, 300) || 'no message'}`);
        resolve();
      });
    });
  });
}
