// GET /metrics (Prometheus text) on its own listener, --metrics-listen, never on the API's:
// delivery figures, queue depths and process memory are for the operator's scraper, not for
// whoever can reach the API. Plain node:http: one path, nothing to route or authenticate; the
// address (loopback by default) is the access control.

import http from 'node:http';
import type { Registry } from 'prom-client';
import type { HttpLimits } from './http-limits.ts';

/** Where /metrics is served (--metrics-listen); `explicit`: configured, not the default. */
export interface MetricsAddress {
  host: string;
  port: number;
  explicit: boolean;
}

export interface MetricsListener {
  /** http://HOST:PORT/metrics */
  url: string;
  close(): Promise<void>;
}

interface Log {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const REASONS: Record<string, string> = {
  EADDRINUSE: 'the address is already in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'the address is not one of this host',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
};

function json(res: http.ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Serves `registry` at `address`. A configured address that cannot be listened on is an
 * error; the default one (not configured) is skipped with a warning, so a second server on
 * the host, or a test, still starts.
 */
export async function listenMetrics(
  registry: Registry,
  address: MetricsAddress,
  limits: HttpLimits,
  log: Log,
): Promise<MetricsListener | undefined> {
  const server = http.createServer(
    {
      headersTimeout: limits.headerTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.max(100, limits.headerTimeoutMs / 4)),
    },
    (req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== '/metrics') return json(res, 404, 'not_found', `no route for ${req.method} ${path}`);
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        return json(res, 405, 'method_not_allowed', 'use GET /metrics');
      }
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(text) });
          res.end(req.method === 'HEAD' ? undefined : text);
        },
        (error: unknown) => {
          log.error({ err: error }, 'metrics collection failed');
          json(res, 500, 'internal', 'internal server error');
        },
      );
    },
  );
  const shown = address.host.includes(':') ? `[${address.host}]` : address.host;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.port, address.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    const reason = REASONS[e.code ?? ''] ?? e.message;
    if (!address.explicit) {
      log.warn(
        { address: `${shown}:${address.port}`, reason },
        'metrics not served: the default metrics address is unavailable (set --metrics-listen)',
      );
      return undefined;
    }
    const failure = new Error(`cannot listen on ${shown}:${address.port} for /metrics (--metrics-listen): ${reason}`);
    failure.name = 'MetricsListenError'; // main.ts: exit code 3, "cannot listen", this message
    throw failure;
  }
  const bound = server.address();
  const port = typeof bound === 'object' && bound ? bound.port : address.port;
  return {
    url: `http://${shown === '0.0.0.0' ? '127.0.0.1' : shown}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
