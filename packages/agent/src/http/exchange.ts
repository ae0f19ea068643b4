// One HTTP exchange on node:http / node:https: a request whose body may be streamed from a
// file with an exact Content-Length, a bounded read of the response, and the two timeouts
// (connect, and no progress either way). Failures come out as the network's errors, with
// messages that name the target (failures.ts).

import type * as HttpModule from 'node:http';
import type { Readable } from 'node:stream';
import type { HttpDeps } from './deps.ts';
import { codedError, withTarget } from './failures.ts';
import type { HttpResponse } from './response.ts';

// Not `import http from 'node:http'`: see deps.ts.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

/** Largest JSON response the agent reads (the service's bodies are a few hundred bytes). */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
export const CONNECT_TIMEOUT_MS = 30_000;
/**
 * No socket activity for this long fails the try: no byte of the response, and no byte of a
 * request body taken by the peer (a slow upload is not cut by it, only a peer that stops
 * reading or answering is).
 */
export const IDLE_TIMEOUT_MS = 120_000;

export type { HttpResponse } from './response.ts';

/**
 * Streams a request body: calls `write` for each chunk in order and resolves once all are
 * written. `write` resolves when the socket has taken the chunk (its buffer may then be
 * reused), and rejects once the exchange is over (an early answer, a failed connection): the
 * writer then stops. Anything else the writer throws fails the exchange with that error.
 */
export type BodyWriter = (write: (chunk: Buffer) => Promise<void>) => Promise<void>;

/** Rejection of `write` after the exchange ended; never surfaces. */
const EXCHANGE_OVER = new Error('the exchange is over');

async function readBody(body: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    if (size + b.length > limit) {
      chunks.push(b.subarray(0, limit - size));
      body.destroy();
      break;
    }
    chunks.push(b);
    size += b.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * One HTTP exchange: the response body is read (bounded) so the connection can be reused.
 * A body given as a BodyWriter is streamed; its headers must carry its exact Content-Length
 * (checked by node:http: a body of another length fails the exchange). An answer that comes
 * before the body is fully sent ends the upload and closes the connection.
 */
export function send(deps: HttpDeps, url: string, init: ExchangeInit): Promise<HttpResponse> {
  return sendOnce(deps, url, init).catch((error: unknown) => {
    // A kept-alive connection the peer closed while it sat idle (its keep-alive timeout ran
    // out as the request went): the request never reached the service. It goes again, once,
    // on a new connection, as node's documentation advises (ClientRequest.reusedSocket); it
    // is not a failed try. A streamed body is not sent twice: the step's retries decide.
    if (staleConnection.has(error as object) && typeof init.body !== 'function' && !init.signal?.aborted)
      return sendOnce(deps, url, init);
    throw error;
  });
}

interface ExchangeInit {
  method: 'GET' | 'POST' | 'PUT';
  headers: Record<string, string>;
  body?: string | BodyWriter;
  /** Ends the exchange at once when aborted (the daemon's long poll, on SIGTERM). */
  signal?: AbortSignal;
}

/** Failures of a request sent on a reused connection that the peer reset before any answer. */
const staleConnection = new WeakSet<object>();

function sendOnce(deps: HttpDeps, url: string, init: ExchangeInit): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    const req = (secure ? https : http).request(target, {
      method: init.method,
      headers: init.headers,
      agent: secure ? deps.agents.https : deps.agents.http,
    });
    // Typed on ServerResponse only; node:http checks it on every OutgoingMessage (write and end throw).
    (req as HttpModule.ClientRequest & { strictContentLength: boolean }).strictContentLength = true;
    let over = false;
    let bodySent = false;
    let endExchange: (error: Error) => void = () => {};
    const exchangeOver = new Promise<never>((_, r) => {
      endExchange = r;
    });
    exchangeOver.catch(() => {});
    const finish = () => {
      over = true;
      endExchange(EXCHANGE_OVER);
    };
    let answered = false;
    const fail = (error: unknown) => {
      if (over) return;
      finish();
      req.destroy();
      const failure = withTarget(error, target);
      const code = (error as { code?: unknown })?.code;
      const reset = code === 'ECONNRESET' || code === 'EPIPE';
      if (req.reusedSocket && !answered && reset && failure instanceof Error) staleConnection.add(failure);
      reject(failure);
    };
    req.on('error', fail);
    if (init.signal) {
      const signal = init.signal;
      const abort = () => req.destroy(codedError('ABORT_ERR', `the request to ${target.host} was cancelled`));
      if (signal.aborted) abort();
      else {
        signal.addEventListener('abort', abort, { once: true });
        req.once('close', () => signal.removeEventListener('abort', abort));
      }
    }
    req.setTimeout(IDLE_TIMEOUT_MS, () =>
      req.destroy(codedError('ETIMEDOUT', `no progress for ${IDLE_TIMEOUT_MS / 1000} s from ${target.host}`)),
    );
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(
        () =>
          req.destroy(codedError('ETIMEDOUT', `connecting to ${target.host} took over ${CONNECT_TIMEOUT_MS / 1000} s`)),
        CONNECT_TIMEOUT_MS,
      );
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    req.on('response', (res) => {
      answered = true;
      readBody(res, MAX_RESPONSE_BYTES).then((text) => {
        if (over) return;
        finish();
        if (!bodySent) req.destroy(); // answered early: the rest of the body is not sent
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text });
      }, fail);
    });
    if (typeof init.body !== 'function') {
      bodySent = true;
      req.end(init.body);
      return;
    }
    const write = (chunk: Buffer): Promise<void> => {
      if (over) return Promise.reject(EXCHANGE_OVER);
      const written = new Promise<void>((ok, ko) => {
        req.write(chunk, (error) => (error ? ko(error) : ok()));
      });
      written.catch(() => {}); // a late failure after the race is lost is the exchange's, handled by fail
      return Promise.race([written, exchangeOver]);
    };
    init.body(write).then(
      () => {
        if (over) return;
        bodySent = true;
        try {
          req.end();
        } catch (error) {
          fail(error);
        }
      },
      (error) => {
        if (error !== EXCHANGE_OVER) fail(error);
      },
    );
  });
}
