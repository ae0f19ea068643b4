// Server-Sent Events framing (WHATWG HTML, "Server-sent events"): each event is a block of
// `field: value` lines ended by an empty line; a line starting with `:` is a comment, which a
// client ignores (the heartbeat). A value never holds a line break: `data` spreads over several
// `data:` lines, which the client joins with "\n"; `id` and `event` refuse one outright.

export interface SseEvent {
  /** Becomes the client's last event id (sent back as Last-Event-ID when it reconnects). */
  id?: string;
  event?: string;
  data: string;
}

const LINE_BREAK = /\r\n|\r|\n/;

function field(name: string, value: string): string {
  if (LINE_BREAK.test(value)) throw new Error(`an SSE ${name} cannot hold a line break`);
  return `${name}: ${value}\n`;
}

/** One event, ready to write. */
export function sseEvent(e: SseEvent): string {
  let out = '';
  if (e.id !== undefined) out += field('id', e.id);
  if (e.event !== undefined) out += field('event', e.event);
  for (const line of e.data.split(LINE_BREAK)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** A comment line: keeps the connection (and the proxies on its way) from going idle. */
export function sseComment(text: string): string {
  return `: ${text.replace(/\r\n|\r|\n/g, ' ')}\n\n`;
}

/** How long a client waits before it reconnects after losing the stream. */
export function sseRetry(ms: number): string {
  return `retry: ${Math.max(0, Math.floor(ms))}\n\n`;
}
