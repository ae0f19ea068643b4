// One listen stream: an open GET /v1/webhooks/listen answered as Server-Sent Events. It
// starts with `retry` and a `ready` event, then catches up (the rows a resumed stream missed,
// or a fresh stream's first moments) while the hub's live rows wait in `pending`, then goes
// live. Each event is one delivery body exactly: `id` = the row's id (what Last-Event-ID
// names), `event` = its Guard-Event, `data` = the V1 envelope as a delivery would send it
// now. Control events carry no id: `ready`, `gap` (events may have been missed) and `bye`
// (the server is ending the stream, and why). A comment every heartbeat keeps proxies from
// cutting an idle stream. A client that stops reading is cut off once the bytes waiting
// for it pass maxBufferedBytes: it reconnects with Last-Event-ID and catches up from the
// database instead of from this process's memory.

import type { SignalTable } from '../../db/index.ts';
import { type EventFilter, wants } from './event-filter.ts';
import { byFeedOrder } from './feed-repository.ts';
import { sseComment, sseEvent, sseRetry } from './sse.ts';

/** What a stream writes to: the hijacked response (node:http's ServerResponse). */
export interface SseOutput {
  write(chunk: string): boolean;
  end(): void;
  destroy(): void;
  readonly writableLength: number;
  readonly destroyed: boolean;
}

export interface StreamOptions {
  id: string;
  tenantId: string;
  filter: EventFilter;
  /** Rows received before this (ISO 8601) are not this stream's. */
  floor: string;
  heartbeatMs: number;
  /** How long a client waits before reconnecting (the `retry` field). */
  retryMs: number;
  maxBufferedBytes: number;
  /** The body a delivery of this row would send now. */
  envelope: (row: SignalTable) => string;
  /** Called once, when the stream has ended for any reason. */
  onEnd: (stream: ListenStream) => void;
}

/** Why a stream ended, as its `bye` event says. */
export type EndReason = 'shutdown' | 'credentials_revoked' | 'too_slow' | 'server_error' | 'client_closed';

export class ListenStream {
  readonly id: string;
  readonly tenantId: string;
  readonly #out: SseOutput;
  readonly #o: StreamOptions;
  #live = false;
  /** Rows before this (feed order) are not the stream's: the option's floor, raised by a truncated catch-up. */
  #floor: { received_at: string; id: string };
  #pending: SignalTable[] = [];
  #ended = false;
  #heartbeat: NodeJS.Timeout | undefined;
  #sent = 0;
  /**
   * Ids sent lately, with their received_at: the hub offers a row once, but a catch-up may
   * have sent it first (a tenant's first stream in this process finds the hub's window unread).
   * Forgotten once they leave the hub's window (forget).
   */
  readonly #recent = new Map<string, string>();

  constructor(out: SseOutput, options: StreamOptions) {
    this.#out = out;
    this.#o = options;
    this.id = options.id;
    this.tenantId = options.tenantId;
    this.#floor = { received_at: options.floor, id: '' };
  }

  #takes(row: SignalTable): boolean {
    return byFeedOrder(row, this.#floor) >= 0 && wants(this.#o.filter, row);
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Rows received before this (ISO 8601) are not this stream's. */
  get floor(): string {
    return this.#floor.received_at;
  }

  /** Events sent so far. */
  get sent(): number {
    return this.#sent;
  }

  /** Writes `retry` and the `ready` event, and starts the heartbeat. */
  start(ready: Record<string, unknown>): void {
    this.#write(sseRetry(this.#o.retryMs) + sseEvent({ event: 'ready', data: JSON.stringify(ready) }));
    this.#heartbeat = setInterval(() => this.#write(sseComment('heartbeat')), this.#o.heartbeatMs);
    this.#heartbeat.unref();
  }

  /** A row the client has already (the event Last-Event-ID named): never sent. */
  remember(row: { id: string; received_at: string }): void {
    this.#recent.set(row.id, row.received_at);
  }

  /** Forgets the ids of rows received before `before`: the hub offers none of them again. */
  forget(before: string): void {
    for (const [id, at] of this.#recent) if (at < before) this.#recent.delete(id);
  }

  /** A row the hub saw for the first time: sent now, or after the catch-up when it is still running. */
  offer(row: SignalTable): void {
    if (this.#ended || !this.#takes(row)) return;
    if (this.#live) this.#send(row);
    else this.#pending.push(row);
  }

  /**
   * Sends the catch-up rows (oldest first), a `gap` event first when some could not be, then
   * what the hub offered meanwhile that the catch-up did not hold; from then on rows go out
   * as they are offered. A `truncated` catch-up (only the newest rows) raises the floor to its
   * oldest row: the older ones it left out are not sent later either.
   */
  catchUp(rows: readonly SignalTable[], gap: string | undefined, truncated = false): void {
    if (this.#ended) return;
    if (truncated && rows.length > 0) this.#floor = { received_at: rows[0].received_at, id: rows[0].id };
    if (gap !== undefined) this.#write(sseEvent({ event: 'gap', data: JSON.stringify({ message: gap }) }));
    for (const row of rows) {
      if (this.#ended) return;
      if (this.#takes(row)) this.#send(row);
    }
    const pending = this.#pending;
    this.#pending = [];
    this.#live = true;
    for (const row of pending) if (this.#takes(row)) this.#send(row);
  }

  /** Ends the stream: a `bye` event saying why (unless the client is gone), then the response. */
  end(reason: EndReason, message?: string): void {
    if (this.#ended) return;
    this.#ended = true;
    clearInterval(this.#heartbeat);
    this.#pending = [];
    this.#recent.clear();
    if (reason === 'too_slow') this.#out.destroy();
    else if (!this.#out.destroyed) {
      if (reason !== 'client_closed')
        this.#out.write(sseEvent({ event: 'bye', data: JSON.stringify({ reason, message }) }));
      this.#out.end();
    }
    this.#o.onEnd(this);
  }

  #send(row: SignalTable): void {
    if (this.#recent.has(row.id)) return;
    this.#recent.set(row.id, row.received_at);
    this.#sent++;
    this.#write(sseEvent({ id: row.id, event: row.event_type, data: this.#o.envelope(row) }));
  }

  #write(chunk: string): void {
    if (this.#ended || this.#out.destroyed) return;
    this.#out.write(chunk);
    if (this.#out.writableLength > this.#o.maxBufferedBytes)
      this.end('too_slow', `more than ${this.#o.maxBufferedBytes} bytes waited for the client`);
  }
}
