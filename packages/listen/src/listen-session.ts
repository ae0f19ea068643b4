// `guard listen`: holds the stream open, forwards each event to the local URL as a signed
// delivery, prints one line per event, and comes back after the stream drops.
//
// - Reconnection: after a drop (the server closed the stream, the connection broke, nothing
//   arrived for three heartbeats, a 429 or 5xx answer) the session waits the stream's `retry`
//   (doubling per failed try up to 30 s, with jitter) and resumes with Last-Event-ID, so the
//   server sends what came meanwhile (within its resume window). Before the first connection
//   any failure ends the session, with its exit code: a typo should not loop.
// - Events are forwarded one at a time, in the order they arrive; one whose id was forwarded
//   already (a resumed stream repeats its last seconds) is skipped.
// - A forward that fails (the local server is down, 15 s without an answer) is printed and
//   not retried: the next event goes on.

import { deliveryHeaders, stampedBody } from './delivery.ts';
import { ListenError } from './errors.ts';
import { networkCause, openStream, ServerAnswerError } from './server-api.ts';
import { type SseMessage, SseParser } from './sse-parser.ts';

/** A forward waits this long for the local receiver's answer (a delivery's timeout). */
export const FORWARD_TIMEOUT_MS = 15_000;
/** Reconnection delays: the stream's `retry` (this until it says), doubled per failed try, at most MAX. */
export const DEFAULT_RETRY_MS = 2000;
export const MAX_RETRY_MS = 30_000;
/** Ids remembered to skip an event forwarded already. */
const REMEMBERED_IDS = 10_000;
/** Before `ready` says the heartbeat, a stream silent this long is taken for lost. */
const FIRST_SILENCE_MS = 45_000;

export interface ListenOptions {
  base: URL;
  token: string;
  /** undefined: events are printed only. */
  forwardTo: URL | undefined;
  /** undefined: every event type. */
  events: string[] | undefined;
  secret: string;
  /** Aborted by Ctrl-C (or SIGTERM): the session ends, with success. */
  signal: AbortSignal;
}

export interface ListenIo {
  out: (line: string) => void;
  err: (line: string) => void;
  now: () => Date;
  newDeliveryId: () => string;
  random: () => number;
}

/** Ids seen lately, the oldest forgotten first. */
class RecentIds {
  readonly #set = new Set<string>();
  has(id: string): boolean {
    return this.#set.has(id);
  }
  add(id: string): void {
    this.#set.add(id);
    if (this.#set.size > REMEMBERED_IDS) this.#set.delete(this.#set.values().next().value as string);
  }
}

/** The line printed for one event. */
export function eventLine(at: Date, event: string, id: string, outcome: string, ms: number | undefined): string {
  return `${at.toISOString()}  ${event}  ${id}  ${outcome}${ms === undefined ? '' : `  ${ms} ms`}`;
}

/** The wait before reconnection try `attempt` (1-based): retry × 2^(attempt−1), at most MAX_RETRY_MS, ±20 %. */
export function reconnectDelay(attempt: number, retryMs: number, random: () => number): number {
  const base = Math.min(MAX_RETRY_MS, retryMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export async function runListen(o: ListenOptions, io: ListenIo): Promise<void> {
  const seen = new RecentIds();
  const parser = { retryMs: DEFAULT_RETRY_MS };
  let lastEventId: string | undefined;
  let connected = false;
  let failures = 0;

  io.err(`Signing secret for this session: ${o.secret}`);
  io.err('(your receiver verifies with it; pass it back with --secret to keep it across sessions)');

  const forward = async (m: SseMessage): Promise<void> => {
    const at = io.now();
    if (!o.forwardTo) {
      io.out(eventLine(at, m.event, m.lastEventId, 'not forwarded', undefined));
      return;
    }
    const body = stampedBody(m.data, at);
    const deliveryId = io.newDeliveryId();
    const started = performance.now();
    // Ended by Ctrl-C or by the timeout (AbortSignal.any would need Node 20.3).
    const abort = new AbortController();
    const stop = () => abort.abort();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, FORWARD_TIMEOUT_MS);
    o.signal.addEventListener('abort', stop, { once: true });
    let outcome: string;
    try {
      const res = await fetch(o.forwardTo, {
        method: 'POST',
        headers: deliveryHeaders(body, m.event, deliveryId, o.secret, at),
        body,
        redirect: 'manual',
        signal: abort.signal,
      });
      await res.arrayBuffer().catch(() => undefined);
      outcome = String(res.status);
    } catch (error) {
      if (o.signal.aborted) return;
      outcome = `error ${timedOut ? 'timeout' : (networkCause(error).code ?? networkCause(error).message)}`;
    } finally {
      clearTimeout(timer);
      o.signal.removeEventListener('abort', stop);
    }
    io.out(eventLine(at, m.event, m.lastEventId, outcome, Math.round(performance.now() - started)));
  };

  /** Reads one stream until it ends; returns why it ended. */
  const consume = async (body: ReadableStream<Uint8Array>, connection: AbortController): Promise<string> => {
    const sse = new SseParser();
    const decoder = new TextDecoder();
    let silenceMs = FIRST_SILENCE_MS;
    let watchdog: NodeJS.Timeout | undefined;
    let silent = false;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        silent = true;
        connection.abort();
      }, silenceMs);
    };
    let bye: string | undefined;
    const reader = body.getReader();
    arm();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return bye ?? 'the server closed the stream';
        arm();
        for (const m of sse.push(decoder.decode(value, { stream: true }))) {
          if (sse.retryMs !== undefined) parser.retryMs = sse.retryMs;
          if (m.event === 'ready') {
            const ready = JSON.parse(m.data) as { tenant_id: string; events: string[]; heartbeat_seconds: number };
            silenceMs = Math.max(3 * ready.heartbeat_seconds * 1000, 5000);
            arm();
            failures = 0;
            if (!connected) {
              const target = o.forwardTo ? `forwarding to ${o.forwardTo.href}` : 'printing only (no --forward-to)';
              io.err(
                `Ready: tenant ${ready.tenant_id} on ${o.base.origin}, events ${ready.events.join(', ')}; ${target}. Ctrl-C stops.`,
              );
            } else io.err(`Reconnected${lastEventId ? ` (resuming after ${lastEventId})` : ''}`);
            connected = true;
          } else if (m.event === 'gap') {
            io.err(`Warning: ${(JSON.parse(m.data) as { message: string }).message}`);
          } else if (m.event === 'bye') {
            const b = JSON.parse(m.data) as { reason: string; message?: string };
            bye = `the server ended the stream: ${b.reason}${b.message ? ` (${b.message})` : ''}`;
          } else {
            if (m.lastEventId) {
              lastEventId = m.lastEventId;
              if (seen.has(m.lastEventId)) continue;
              seen.add(m.lastEventId);
            }
            await forward(m);
            if (o.signal.aborted) return 'stopped';
            arm(); // time spent on the local receiver is not the stream's silence
          }
        }
      }
    } catch (error) {
      if (silent) return `nothing arrived for ${silenceMs / 1000} s`;
      if (o.signal.aborted) return 'stopped';
      const cause = networkCause(error);
      return `the connection broke: ${cause.code ?? cause.message}`;
    } finally {
      clearTimeout(watchdog);
      reader.releaseLock();
    }
  };

  while (!o.signal.aborted) {
    const connection = new AbortController();
    const stop = () => connection.abort();
    o.signal.addEventListener('abort', stop, { once: true });
    let why: string;
    let waitMs: number | undefined;
    try {
      const body = await openStream({
        base: o.base,
        token: o.token,
        events: o.events,
        lastEventId,
        signal: connection.signal,
      });
      why = await consume(body, connection);
      connection.abort(); // the body of a stream left early
    } catch (error) {
      if (o.signal.aborted) break;
      // Before the first connection every failure is final; after it, what may pass is waited out.
      const passing =
        connected &&
        ((error instanceof ServerAnswerError && error.transient) ||
          (error instanceof ListenError && error.kind === 'unreachable'));
      if (!passing) throw error;
      why = (error as Error).message;
      waitMs = error instanceof ServerAnswerError ? error.retryAfterMs : undefined;
    } finally {
      o.signal.removeEventListener('abort', stop);
    }
    if (o.signal.aborted) break;
    failures++;
    const delay = waitMs ?? reconnectDelay(failures, parser.retryMs, io.random);
    io.err(`Stream lost (${why}); reconnecting in ${(delay / 1000).toFixed(1)} s`);
    await sleep(delay, o.signal);
  }
  io.err('Stopped.');
}
