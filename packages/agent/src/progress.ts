// Progress on stderr, drawn only when stderr is a TTY (DESIGN §3: scripts read stderr's
// sha256=/size= lines, so nothing else may be interleaved there when it is not a terminal).
//
// The display is one line that always ends with a newline: each update moves the cursor up
// one line, erases it and draws it again. The cursor therefore always rests at the start of
// a fresh line, so a Ctrl-C or a kill (the agent installs no signal handlers, spec 1.7) leaves
// the shell's prompt and any later output on a line of their own, with no handler to restore
// the terminal. The line is fitted to the terminal's width as it is at each draw (node keeps
// `columns` current on resize): the figures are kept whole, the label is shortened.

export interface Progress {
  /** Adds work to the total (bytes); a negative amount takes back work that will not be done. */
  grow(bytes: number): void;
  advance(bytes: number): void;
  /** Names what is being done now (shown after the figures). */
  phase(label: string): void;
  /** Prints one line of text (a notice) above the display; off a terminal, just the line. */
  print(line: string): void;
  /** Erases the display, so the lines printed after it stand alone. */
  done(): void;
}

/** Draws nothing and prints nothing. */
export const SILENT_PROGRESS: Progress = { grow() {}, advance() {}, phase() {}, print() {}, done() {} };

/** Least time between two draws caused by advance(); a new phase or a resize draws at once. */
export const REDRAW_MS = 100;
/** The bar's widest; it narrows before the label is cut, and goes when narrower than BAR_MIN. */
const BAR_MAX = 24;
const BAR_MIN = 8;
/** Columns of the label (at most) kept before the bar gives up its own. */
const LABEL_ROOM = 24;
/** Used when the terminal does not report its width. */
const DEFAULT_COLUMNS = 80;
const UP_AND_ERASE = '\x1b[1A\r\x1b[2K';

export interface ProgressState {
  done: number;
  total: number;
  label: string;
}

/**
 * The display line for a terminal `columns` wide: `<bar> <pct>% <done>/<total> <label>`, or
 * the label alone while there is no byte count. Its length is at most columns - 1 (writing the
 * last column would wrap on some terminals); the label is cut with "…" first, then the bar
 * narrows, and only a terminal narrower than the figures themselves cuts them.
 */
export function renderLine(state: ProgressState, columns: number): string {
  const room = Math.max(1, columns - 1);
  if (state.total <= 0) return fit(state.label, room);
  const ratio = Math.min(1, Math.max(0, state.done / state.total));
  const figures = `${`${Math.floor(ratio * 100)}`.padStart(3)}% ${formatBytes(Math.min(state.done, state.total))}/${formatBytes(state.total)}`;
  const labelRoom = Math.min([...state.label].length, LABEL_ROOM);
  const fits = Math.min(BAR_MAX, room - figures.length - 2 - labelRoom);
  const bar = fits >= BAR_MIN ? fits : 0;
  const filled = Math.round(ratio * bar);
  const head = bar > 0 ? `${'█'.repeat(filled)}${'░'.repeat(bar - filled)} ${figures}` : figures;
  if (head.length >= room) return head.slice(0, room);
  const label = fit(state.label, room - head.length - 1);
  return label === '' ? head : `${head} ${label}`;
}

/** `text` cut to `width` characters, the cut marked with "…". */
function fit(text: string, width: number): string {
  if (width <= 0) return '';
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, width - 1).join('')}…`;
}

export function createProgress(stream: NodeJS.WriteStream, now: () => number = Date.now): Progress {
  if (!stream.isTTY) return { ...SILENT_PROGRESS, print: (line) => void stream.write(`${line}\n`) };
  const state: ProgressState = { done: 0, total: 0, label: '' };
  /** Characters of the line on screen, or undefined when none is. */
  let shown: number | undefined;
  let lastDraw = Number.NEGATIVE_INFINITY;
  let finished = false;

  const columns = (): number => (stream.columns > 0 ? stream.columns : DEFAULT_COLUMNS);
  /**
   * What takes the line on screen away: up one line and erase it — when it still occupies
   * exactly one row. A line as wide as the terminal now is (it shrank since) may have been
   * wrapped onto two rows or cut, depending on the terminal: it is left as it is, and the new
   * line is drawn below it rather than erasing a row that may not be ours.
   */
  const takeBack = (): string => {
    const text = shown !== undefined && shown < columns() ? UP_AND_ERASE : '';
    shown = undefined;
    return text;
  };
  const draw = (force: boolean): void => {
    if (finished) return;
    const t = now();
    if (!force && t - lastDraw < REDRAW_MS) return;
    lastDraw = t;
    const line = renderLine(state, columns());
    const erase = takeBack();
    if (line === '') {
      if (erase) stream.write(erase); // nothing to show yet
      return;
    }
    stream.write(`${erase}${line}\n`);
    shown = line.length;
  };
  const onResize = (): void => draw(true);
  stream.on('resize', onResize);

  return {
    grow(bytes) {
      state.total = Math.max(0, state.total + bytes);
    },
    advance(bytes) {
      state.done += bytes;
      draw(false);
    },
    phase(label) {
      state.label = label;
      draw(true);
    },
    print(line) {
      const erase = takeBack();
      stream.write(`${erase}${line}\n`);
      draw(true);
    },
    done() {
      if (finished) return;
      finished = true;
      stream.off('resize', onResize);
      const erase = takeBack();
      if (erase) stream.write(erase);
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
