// How long a peer may take, on the API listener (docs/guard-server.md, "Limits"):
//   - request line and headers: node:http's headersTimeout (it also closes a connection that
//     never sends a byte);
//   - an API request's body: within requestTimeoutMs of its headers (bodyDeadline below), so
//     a peer cannot hold a connection by trickling a JSON body;
//   - the upload PUT streams up to 2 GiB at whatever speed the link has, so it has no total
//     deadline (node's requestTimeout stays off: it would cut a healthy slow upload); once its
//     body streams into the store it is governed by an idle timeout (objects/routes.ts);
//   - idle keep-alive connections between requests: keepAliveTimeoutMs.
// A timed-out request is answered 408 `request_timeout` when nothing was sent yet, and its
// connection closed either way.

import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { SettingRow, SettingsReader } from './settings.ts';

/** Intake limits: timeouts of slow peers, concurrent PUTs, stored bytes per tenant (config.ts reads them with httpLimits). */
export interface HttpLimits {
  /** The request line and headers must arrive within this (node:http headersTimeout). */
  headerTimeoutMs: number;
  /** An API request's body must arrive within this after its headers (not the upload PUT). */
  requestTimeoutMs: number;
  /** An upload PUT that receives no byte for this long is aborted. */
  uploadIdleTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Upload PUTs in flight, in total and per tenant. */
  maxUploads: number;
  maxUploadsPerTenant: number;
  /** Bytes of registered bundles plus open reservations per tenant; 0: no quota. */
  tenantQuotaBytes: number;
}

/** The intake limits' rows of the settings table. */
export const HTTP_LIMIT_SETTINGS = [
  {
    key: 'headerTimeoutSeconds',
    flag: 'header-timeout',
    env: 'GUARD_SERVER_HEADER_TIMEOUT',
    file: 'header_timeout_seconds',
    default: '20',
  },
  {
    key: 'requestTimeoutSeconds',
    flag: 'request-timeout',
    env: 'GUARD_SERVER_REQUEST_TIMEOUT',
    file: 'request_timeout_seconds',
    default: '30',
  },
  {
    key: 'uploadIdleTimeoutSeconds',
    flag: 'upload-idle-timeout',
    env: 'GUARD_SERVER_UPLOAD_IDLE_TIMEOUT',
    file: 'upload_idle_timeout_seconds',
    default: '60',
  },
  {
    key: 'keepAliveTimeoutSeconds',
    flag: 'keep-alive-timeout',
    env: 'GUARD_SERVER_KEEP_ALIVE_TIMEOUT',
    file: 'keep_alive_timeout_seconds',
    default: '72',
  },
  { key: 'maxUploads', flag: 'max-uploads', env: 'GUARD_SERVER_MAX_UPLOADS', file: 'max_uploads', default: '32' },
  {
    key: 'maxUploadsPerTenant',
    flag: 'max-uploads-per-tenant',
    env: 'GUARD_SERVER_MAX_UPLOADS_PER_TENANT',
    file: 'max_uploads_per_tenant',
    default: '8',
  },
  {
    key: 'tenantQuotaBytes',
    flag: 'tenant-quota-bytes',
    env: 'GUARD_SERVER_TENANT_QUOTA_BYTES',
    file: 'tenant_quota_bytes',
    default: String(10 * 1024 ** 3),
  },
] as const satisfies readonly SettingRow[];

export function httpLimits(r: SettingsReader): HttpLimits {
  return {
    headerTimeoutMs: r.timeoutMs('headerTimeoutSeconds'),
    requestTimeoutMs: r.timeoutMs('requestTimeoutSeconds'),
    uploadIdleTimeoutMs: r.timeoutMs('uploadIdleTimeoutSeconds'),
    keepAliveTimeoutMs: r.timeoutMs('keepAliveTimeoutSeconds'),
    maxUploads: r.integer('maxUploads', 1),
    maxUploadsPerTenant: r.integer('maxUploadsPerTenant', 1),
    tenantQuotaBytes: r.integer('tenantQuotaBytes', 0),
  };
}

type Limits = HttpLimits;

/** The Fastify (and node:http) options carrying the listener's timeouts. */
export function listenerTimeouts(limits: Limits): Pick<FastifyServerOptions, 'keepAliveTimeout' | 'requestTimeout'> & {
  http: { headersTimeout: number; connectionsCheckingInterval: number; requestTimeout: number };
} {
  return {
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: 0,
    http: {
      headersTimeout: limits.headerTimeoutMs,
      requestTimeout: 0,
      // node checks the header deadline on this interval (default 30 s, too coarse for a
      // deadline of seconds); a pass over the open connections is cheap.
      connectionsCheckingInterval: Math.min(1000, Math.max(100, limits.headerTimeoutMs / 4)),
    },
  };
}

/**
 * Answers on the raw socket and closes the connection: for a request whose body was not (or
 * not wholly) read, where the connection cannot be reused.
 */
export function answerAndClose(socket: Duplex, status: number, reason: string, code: string, message: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ error: { code, message } });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  // A peer that does not read its answer does not keep the socket either.
  setTimeout(() => socket.destroy(), 1000).unref();
}

const deadlines = new WeakMap<object, NodeJS.Timeout>();

/**
 * Every request whose body has not fully arrived when its route is found must receive it
 * within `requestTimeoutMs`: else it is answered 408 (or, when an answer already went out,
 * its connection is closed). A route that streams its body under its own idle timeout takes
 * the request out with releaseBodyDeadline once it starts reading.
 */
export function bodyDeadline(app: FastifyInstance, limits: Limits): void {
  const seconds = limits.requestTimeoutMs / 1000;
  app.addHook('onRequest', (req, reply, done) => {
    const raw = req.raw;
    if (raw.complete) return done();
    const timer = setTimeout(() => {
      deadlines.delete(raw);
      if (raw.complete || raw.socket.destroyed) return;
      req.log.info({ timeoutSeconds: seconds }, 'request body timed out');
      if (reply.raw.headersSent) raw.socket.destroy();
      else
        answerAndClose(
          raw.socket,
          408,
          'Request Timeout',
          'request_timeout',
          `the request body did not arrive within ${seconds} s`,
        );
    }, limits.requestTimeoutMs);
    timer.unref();
    deadlines.set(raw, timer);
    raw.once('close', () => releaseBodyDeadline(raw));
    done();
  });
}

export function releaseBodyDeadline(raw: object): void {
  clearTimeout(deadlines.get(raw));
  deadlines.delete(raw);
}
