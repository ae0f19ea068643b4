// A Server-Sent Events parser, as the WHATWG HTML standard's "Interpreting an event stream"
// says, for text that arrives in chunks of any size: lines end with CRLF, LF or CR (a CR at
// the end of one chunk and an LF at the start of the next are one line end); a line starting
// with ":" is a comment; `data` lines are joined with "\n"; an `id` holding NUL is ignored;
// `retry` takes ASCII digits only; an empty line dispatches the event, unless it has no data.
// The last event id persists across events (an event without `id` keeps it), as a browser's
// EventSource does. Hand-written (≈70 lines, tested beside) because the CLI is bundled with no
// dependency, and the parsers on npm add a dependency for exactly this.

export interface SseMessage {
  /** `message` when the event named none. */
  event: string;
  data: string;
  /** The last event id as of this event (what to send as Last-Event-ID). */
  lastEventId: string;
}

export class SseParser {
  #buffer = '';
  #data = '';
  #event = '';
  #idBuffer = '';
  #sawCr = false;
  #first = true;
  /** The last `retry` the stream asked for, in ms. */
  retryMs: number | undefined;
  /** The last event id, as Last-Event-ID would send it. */
  lastEventId = '';

  /** Feeds text; returns the events it completed, and calls onComment for each comment line. */
  push(text: string, onComment?: (comment: string) => void): SseMessage[] {
    if (this.#first && text.length > 0) {
      this.#first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // A CR that ended the previous chunk was a line end; an LF right after it belongs to it.
    if (this.#sawCr && text.startsWith('\n')) text = text.slice(1);
    this.#sawCr = false;
    const out: SseMessage[] = [];
    let text2 = this.#buffer + text;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(text2);
      if (!m) break;
      // A CR at the very end may be the first half of a CRLF: take it as the line end now and
      // drop an LF that starts the next chunk.
      if (m[0] === '\r' && m.index === text2.length - 1) this.#sawCr = true;
      const line = text2.slice(0, m.index);
      text2 = text2.slice(m.index + m[0].length);
      this.#line(line, out, onComment);
    }
    this.#buffer = text2;
    return out;
  }

  #line(line: string, out: SseMessage[], onComment?: (comment: string) => void): void {
    if (line === '') {
      this.lastEventId = this.#idBuffer;
      if (this.#data !== '') {
        out.push({ event: this.#event || 'message', data: this.#data.slice(0, -1), lastEventId: this.lastEventId });
      }
      this.#data = '';
      this.#event = '';
      return;
    }
    if (line.startsWith(':')) {
      onComment?.(line.slice(1).trimStart());
      return;
    }
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (name) {
      case 'event':
        this.#event = value;
        break;
      case 'data':
        this.#data += `${value}\n`;
        break;
      case 'id':
        if (!value.includes('\0')) this.#idBuffer = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.retryMs = Number(value);
        break;
      default: // unknown fields are ignored
    }
  }
}
