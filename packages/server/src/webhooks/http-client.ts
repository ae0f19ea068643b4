// The delivery HTTP client: undici with keep-alive, a connector that resolves the host
// itself and refuses non-public addresses (ssrf.ts) while keeping the hostname for TLS SNI
// and certificate checks, a hard per-request timeout, no redirects, and a capped excerpt of
// the response body. TLS is always verified; extra CAs come from NODE_EXTRA_CA_CERTS.

import { getCACertificates } from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { resolveDeliveryAddress } from './ssrf.ts';

export const DELIVERY_TIMEOUT_MS = 15_000;
export const RESPONSE_EXCERPT_MAX_BYTES = 1024;

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

export function createDeliveryAgent(options: {
  allowPrivate: boolean;
  timeoutMs: number;
  /** Extra trusted CAs (PEM) on top of Node's store; in-process tests use it, a deployment uses NODE_EXTRA_CA_CERTS. */
  extraCa?: string[];
}): Dispatcher {
  const ca = options.extraCa ? [...getCACertificates('default'), ...options.extraCa] : undefined;
  const tls = buildConnector({ timeout: options.timeoutMs, rejectUnauthorized: true, ...(ca ? { ca } : {}) });
  const connect: buildConnector.connector = (opts, callback) => {
    resolveDeliveryAddress(opts.hostname, options.allowPrivate).then(
      ({ address }) => {
        // Connect to the vetted address; SNI and the certificate check still use the name.
        const servername = opts.servername ?? (/^[\d.]+$|:/.test(opts.hostname) ? undefined : opts.hostname);
        tls({ ...opts, hostname: address, servername }, callback);
      },
      (error: Error) => callback(error, null),
    );
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

export async function sendDelivery(agent: Dispatcher, req: DeliveryRequest): Promise<DeliveryResponse> {
  const url = new URL(req.url);
  const signal = AbortSignal.timeout(req.timeoutMs);
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
