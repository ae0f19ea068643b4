// Progress on stderr, drawn only when stderr is a TTY (DESIGN §3: scripts read stderr's
// sha256=/size= lines, so nothing else may be interleaved there when it is not a terminal).

export interface Progress {
  /** Adds work to the total (bytes). */
  grow(bytes: number): void;
  advance(bytes: number): void;
  phase(label: string): void;
  /** Erases the display, so the lines printed after it stand alone. */
  done(): void;
}

export const SILENT_PROGRESS: Progress = { grow() {}, advance() {}, phase() {}, done() {} };

const REDRAW_MS = 100;
const BAR_WIDTH = 24;

export function createProgress(stream: NodeJS.WriteStream, now: () => number = Date.now): Progress {
  if (!stream.isTTY) return SILENT_PROGRESS;
  let total = 0;
  let done = 0;
  let label = '';
  let lastDraw = 0;
  const draw = (force: boolean): void => {
    const t = now();
    if (!force && t - lastDraw < REDRAW_MS) return;
    lastDraw = t;
    const ratio = total > 0 ? Math.min(1, done / total) : 0;
    const filled = Math.round(ratio * BAR_WIDTH);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}`;
    const pct = `${Math.floor(ratio * 100)}`.padStart(3);
    const width = stream.columns ?? 80;
    const text = `${bar} ${pct}% ${formatBytes(done)}/${formatBytes(total)} ${label}`;
    stream.write(`\r\x1b[K${text.slice(0, width - 1)}`);
  };
  return {
    grow(bytes) {
      total += bytes;
    },
    advance(bytes) {
      done += bytes;
      draw(false);
    },
    phase(next) {
      label = next;
      draw(true);
    },
    done() {
      stream.write('\r\x1b[K');
    },
  };
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}
