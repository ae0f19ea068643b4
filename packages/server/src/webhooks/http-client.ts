// The delivery HTTP client: undici with keep-alive, a connector that resolves the host
// itself and refuses non-public addresses (ssrf.ts) while keeping the hostname for TLS SNI
// and certificate checks, a hard per-request timeout, no redirects, and a capped excerpt of
// the response body. TLS is always verified; extra CAs come from NODE_EXTRA_CA_CERTS.
//
// With a proxy (--webhook-proxy), each connection is a CONNECT tunnel through it, opened to
// the address the SSRF guard vetted (never to the name, which the proxy would resolve again),
// with TLS end to end inside it: SNI and the certificate check still use the endpoint's name.
// An endpoint with TLS settings of its own (endpoint-tls.ts: a client certificate, a CA bundle)
// gets an agent of its own, so its TLS sessions are never shared with another endpoint's.

import net from 'node:net';
import { getCACertificates } from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { EndpointTlsOptions } from './endpoint-tls.ts';
import type { WebhookProxy } from './settings.ts';
import { resolveDeliveryAddress } from './ssrf.ts';

export const DELIVERY_TIMEOUT_MS = 15_000;
export const RESPONSE_EXCERPT_MAX_BYTES = 1024;
/** A proxy's answer to CONNECT larger than this is refused. */
const CONNECT_RESPONSE_MAX_BYTES = 16_384;

export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

export interface DeliveryResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  excerpt: string;
}

export interface DeliveryAgentOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  /** Extra trusted CAs (PEM) on top of Node's store; in-process tests use it, a deployment uses NODE_EXTRA_CA_CERTS. */
  extraCa?: string[];
  /** Tunnel every connection through this HTTP CONNECT proxy. */
  proxy?: WebhookProxy;
}

/** The shared agent, and one per endpoint with TLS settings of its own. */
export interface DeliveryAgents {
  shared: Dispatcher;
  /** A new agent presenting the endpoint's client certificate and trusting its CA bundle; the caller closes it. */
  forEndpoint(tls: EndpointTlsOptions): Dispatcher;
}

export function createDeliveryAgents(options: DeliveryAgentOptions): DeliveryAgents {
  return {
    shared: createDeliveryAgent(options),
    forEndpoint: (tls) => createDeliveryAgent(options, tls),
  };
}

export function createDeliveryAgent(options: DeliveryAgentOptions, endpointTls?: EndpointTlsOptions): Dispatcher {
  // An endpoint's CA bundle replaces the trusted roots; otherwise Node's, plus the extra ones.
  const ca = endpointTls?.ca ?? (options.extraCa ? [...getCACertificates('default'), ...options.extraCa] : undefined);
  const tls = buildConnector({
    timeout: options.timeoutMs,
    rejectUnauthorized: true,
    ...(ca ? { ca } : {}),
    ...(endpointTls?.cert ? { cert: endpointTls.cert, key: endpointTls.key } : {}),
  });
  const { proxy } = options;
  const connect: buildConnector.connector = (opts, callback) => {
    resolveDeliveryAddress(opts.hostname, options.allowPrivate)
      .then(async ({ address }) => {
        // Connect to the vetted address; SNI and the certificate check still use the name.
        const servername = opts.servername ?? (/^[\d.]+$|:/.test(opts.hostname) ? undefined : opts.hostname);
        const port = Number(opts.port) || 443;
        const httpSocket = proxy ? await openTunnel(proxy, address, port, options.timeoutMs) : undefined;
        tls({ ...opts, hostname: address, servername, ...(httpSocket ? { httpSocket } : {}) }, callback);
      })
      .catch((error: Error) => callback(error, null));
  };
  return new Agent({
    connect,
    // No per-origin cap: endpoints on one host must not queue behind each other; the worker
    // bounds concurrency per endpoint and overall.
    connections: null,
    keepAliveTimeout: 30_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
}

/** An error of the proxy leg, named as the attempt log shows it. */
class ProxyError extends Error {
  readonly code = 'ERR_GUARD_PROXY';
}

/**
 * A TCP connection through the proxy to `address:port` (RFC 9110 §9.3.6): CONNECT, then the
 * proxy's 2xx, after which the socket carries the TLS connection to the receiver.
 */
export function openTunnel(proxy: WebhookProxy, address: string, port: number, timeoutMs: number): Promise<net.Socket> {
  const authority = `${net.isIPv6(address) ? `[${address}]` : address}:${port}`;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: proxy.host, port: proxy.port });
    const fail = (message: string) => {
      socket.destroy();
      reject(new ProxyError(`webhook proxy ${proxy.shown}: ${message}`));
    };
    const timer = setTimeout(() => fail(`no answer to CONNECT ${authority} within ${timeoutMs / 1000} s`), timeoutMs);
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) {
        if (received.length > CONNECT_RESPONSE_MAX_BYTES) fail('its answer to CONNECT is too large');
        return;
      }
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(received.subarray(0, end).toString('latin1'));
      if (status?.[1][0] !== '2') {
        const line = received.subarray(0, Math.min(end, received.indexOf('\r\n'))).toString('latin1');
        return fail(`CONNECT ${authority} refused: ${line.slice(0, 200)}`);
      }
      const rest = received.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    const onError = (e: Error) => {
      clearTimeout(timer);
      fail(`${(e as NodeJS.ErrnoException).code ?? 'error'}: ${e.message}`);
    };
    const onClose = () => {
      clearTimeout(timer);
      fail(`closed the connection before answering CONNECT ${authority}`);
    };
    socket.on('data', onData);
    socket.once('error', onError);
    socket.once('close', onClose);
    socket.once('connect', () => {
      const auth = proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : '';
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
    });
  });
}

export async function sendDelivery(agent: Dispatcher, req: DeliveryRequest): Promise<DeliveryResponse> {
  // The hard deadline of the whole exchange. Not AbortSignal.timeout: its timer is not cleared
  // when the request ends, so every delivery's signal fired 15 s later, with an exception and
  // an abort event made for nobody (~1 % of the event loop's time in bench:peers).
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    req.timeoutMs,
  );
  try {
    return await exchange(agent, req, deadline.signal);
  } finally {
    clearTimeout(timer);
  }
}

async function exchange(agent: Dispatcher, req: DeliveryRequest, signal: AbortSignal): Promise<DeliveryResponse> {
  const url = new URL(req.url);
  const res = await agent.request({
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    method: 'POST',
    headers: req.headers,
    body: req.body,
    signal,
  });
  // Read at most the excerpt, then drop the rest: a huge or endless body costs nothing.
  const chunks: Buffer[] = [];
  let kept = 0;
  try {
    for await (const chunk of res.body) {
      const c = chunk as Buffer;
      chunks.push(c.subarray(0, RESPONSE_EXCERPT_MAX_BYTES - kept));
      kept += Math.min(c.length, RESPONSE_EXCERPT_MAX_BYTES - kept);
      if (kept >= RESPONSE_EXCERPT_MAX_BYTES) break;
    }
  } catch {
    // the status is what counts; a body that fails mid-way still leaves its excerpt
  } finally {
    res.body.destroy();
  }
  return { status: res.statusCode, headers: res.headers, excerpt: Buffer.concat(chunks).toString('utf8') };
}
