// The daemon's log: one line per event on stderr (journald keeps it), slog-style like the
// agent's own log — `time=… level=INFO msg="…" key=value` — so the same tools read both.
// Values from the other side (the service's messages) are stripped of control characters.

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

export function createLog(stream: NodeJS.WritableStream, now: () => Date): DaemonLog {
  const write = (level: LogLevel) => (msg: string, attrs?: LogAttrs) =>
    void stream.write(formatLine(now(), level, msg, attrs));
  return { info: write('INFO'), warn: write('WARN'), error: write('ERROR') };
}
