// A Server-Sent Events client for tests: GET /v1/webhooks/listen with fetch, parsed by the
// CLI's own parser, each event awaited as it arrives (no polling, no sleeps).

import { type SseMessage, SseParser } from '../src/sse-parser.ts';

export interface OpenOptions {
  token?: string;
  events?: string;
  lastEventId?: string;
  headers?: Record<string, string>;
}

export class SseClient {
  readonly status: number;
  readonly headers: Headers;
  /** Every event received so far, in order. */
  readonly received: SseMessage[] = [];
  /** Resolves once the server ended the stream (or the client closed it). */
  readonly ended: Promise<void>;
  readonly #controller: AbortController;
  #waiters: (() => void)[] = [];
  #done = false;

  private constructor(res: Response, controller: AbortController) {
    this.status = res.status;
    this.headers = res.headers;
    this.#controller = controller;
    this.ended = this.#read(res);
  }

  /** Opens a stream; a refusal (any status but 200) comes back with its JSON body and no stream. */
  static async open(
    base: string,
    options: OpenOptions = {},
  ): Promise<{ status: number; headers: Headers; client: SseClient | undefined; json: unknown }> {
    const controller = new AbortController();
    const url = new URL('/v1/webhooks/listen', base);
    if (options.events !== undefined) url.searchParams.set('events', options.events);
    const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
    const res = await fetch(url, { headers, signal: controller.signal });
    if (res.status !== 200) {
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, client: undefined, json };
    }
    return { status: 200, headers: res.headers, client: new SseClient(res, controller), json: undefined };
  }

  /** Opens a stream that must be admitted, and waits for its `ready` event. */
  static async connect(base: string, options: OpenOptions = {}): Promise<SseClient> {
    const { status, json, client } = await SseClient.open(base, options);
    if (!client) throw new Error(`the stream was refused: ${status} ${JSON.stringify(json)}`);
    await client.waitFor((m) => m.event === 'ready', 'the ready event');
    return client;
  }

  async #read(res: Response): Promise<void> {
    const parser = new SseParser();
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const messages = parser.push(decoder.decode(chunk, { stream: true }));
        if (messages.length > 0) {
          this.received.push(...messages);
          this.#wake();
        }
      }
    } catch {
      // closed by the client, or the connection broke: the stream has ended either way
    } finally {
      this.#done = true;
      this.#wake();
    }
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** The first event received (so far or later) that `pred` holds for; fails when the stream ends first. */
  async waitFor(pred: (m: SseMessage) => boolean, what: string): Promise<SseMessage> {
    for (;;) {
      const found = this.received.find(pred);
      if (found) return found;
      if (this.#done) throw new Error(`the stream ended before ${what}; received: ${JSON.stringify(this.received)}`);
      await new Promise<void>((r) => this.#waiters.push(r));
    }
  }

  /** The events carrying an id (the tenant's events, not ready/gap/bye). */
  events(): SseMessage[] {
    return this.received.filter((m) => !['ready', 'gap', 'bye'].includes(m.event));
  }

  close(): void {
    this.#controller.abort();
  }
}
