// Starting and stopping the service: open the data dir (database, master key, object
// store), sweep what a crash left, listen (the API, and /metrics on its own address), collect
// expired uploads on a timer, and on SIGTERM/SIGINT stop accepting, finish in-flight requests
// and close the database.

import { readFile } from 'node:fs/promises';
import type { Server as HttpsServer } from 'node:https';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { ServerConfig } from './config.ts';
import { type DataDirLock, lockDataDir } from './data-dir-lock.ts';
import { openDatabase } from './db/index.ts';
import type { AppDeps } from './deps.ts';
import { createLogger, type Logger } from './logger.ts';
import { loadOrCreateMasterKey } from './master-key.ts';
import { listenMetrics, type MetricsListener } from './metrics-listener.ts';
import { collectExpiredUploads, openObjectStore } from './objects/index.ts';
import { SignalOutbox } from './signals/index.ts';
import {
  createDeliveryAgent,
  createMetrics,
  DeliveryWorker,
  SqliteDeliveryQueue,
  sealPlaintextHeaders,
} from './webhooks/index.ts';

export interface RunningServer {
  app: FastifyInstance;
  deps: AppDeps & { worker: DeliveryWorker };
  url: string;
  /** http://HOST:PORT/metrics, or undefined when metrics are not served. */
  metricsUrl: string | undefined;
  /**
   * Reads --tls-cert and --tls-key again and serves them to new TLS handshakes; open
   * connections keep theirs (SIGHUP, main.ts). Throws, keeping the old pair, when they cannot
   * be read or do not match; undefined without TLS.
   */
  reloadTls: (() => Promise<void>) | undefined;
  close(): Promise<void>;
}

/** The certificate chain and key of --tls-cert and --tls-key (PEM), read now. */
export async function readTls(tls: NonNullable<ServerConfig['tls']>): Promise<{ cert: Buffer; key: Buffer }> {
  const [cert, key] = await Promise.all([readFile(tls.certPath), readFile(tls.keyPath)]);
  return { cert, key };
}

export async function openDeps(
  config: ServerConfig,
  now: () => Date,
  publicUrl: () => string,
  log: Logger,
  extraCa?: string[],
): Promise<AppDeps & { worker: DeliveryWorker }> {
  const db = await openDatabase(config.dataDir);
  const masterKey = loadOrCreateMasterKey(config.dataDir);
  const store = await openObjectStore(config.objectStore, config.dataDir, {
    key: masterKey.derive('presign'),
    publicUrl,
  });
  const metrics = createMetrics(db, now);
  const w = config.webhook;
  const queue = new SqliteDeliveryQueue(db);
  const worker = new DeliveryWorker(
    {
      queue,
      agent: createDeliveryAgent({
        allowPrivate: config.webhookAllowPrivate,
        timeoutMs: w.timeoutMs,
        extraCa,
      }),
      secretKey: masterKey.derive('webhook-secrets'),
      consoleBaseUrl: publicUrl,
      now,
      random: Math.random,
      metrics,
      log,
    },
    {
      concurrency: w.concurrency,
      perEndpointConcurrency: w.perEndpointConcurrency,
      leaseMs: w.leaseMs,
      pollMs: w.pollMs,
      timeoutMs: w.timeoutMs,
      schedule: w.retrySchedule,
      disableAfterMs: w.disableAfterMs,
    },
  );
  return {
    config,
    db,
    store,
    masterKey,
    now,
    publicUrl,
    webhooks: { wake: () => worker.wake(), metrics },
    outbox: new SignalOutbox(queue),
    worker,
  };
}

export async function startServer(
  config: ServerConfig,
  options: { now?: () => Date; logger?: boolean; deliveryCa?: string[] } = {},
): Promise<RunningServer> {
  // --public-url, or else the address actually listened on (known only after listen()).
  let publicUrl = config.publicUrl;
  const logger = createLogger(config.logLevel, { enabled: options.logger !== false });
  const deps = await openDeps(
    config,
    options.now ?? (() => new Date()),
    () => {
      if (!publicUrl) throw new Error('the public URL is known once the server listens');
      return publicUrl;
    },
    logger,
    options.deliveryCa,
  );
  let lock: DataDirLock;
  try {
    lock = await lockDataDir(config.dataDir);
  } catch (error) {
    await deps.db.destroy();
    throw error;
  }
  const swept = await deps.store.sweepPartials();
  let https: { cert: Buffer; key: Buffer } | undefined;
  try {
    https = config.tls && (await readTls(config.tls));
  } catch (error) {
    await deps.db.destroy();
    await lock.release();
    throw error;
  }
  const app = await buildApp(deps, { logger, https });
  if (swept > 0) app.log.info({ swept }, 'removed partial uploads left by an earlier crash');
  let metrics: MetricsListener | undefined;
  try {
    if (config.metricsListen)
      metrics = await listenMetrics(deps.webhooks.metrics.registry, config.metricsListen, config.limits, app.log);
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await metrics?.close();
    await app.close();
    await deps.db.destroy();
    await lock.release();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  publicUrl ??= `${https ? 'https' : 'http'}://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  const gc = setInterval(() => {
    collectExpiredUploads(deps).then(
      (n) => n > 0 && app.log.info({ collected: n }, 'collected expired uploads'),
      (error) => app.log.error({ err: error }, 'upload collection failed'),
    );
  }, config.gcIntervalSeconds * 1000);
  gc.unref();
  // Custom header values an earlier release stored in clear are sealed before any is sent.
  const sealed = await sealPlaintextHeaders(deps.db, deps.masterKey.derive('webhook-secrets'));
  if (sealed > 0) app.log.info({ endpoints: sealed }, 'sealed custom header values stored in clear');
  // The embedded SQLite database has one owner: leases of a crashed run are released at once.
  await deps.worker.start({ releaseLeases: true });
  return {
    app,
    deps,
    url: deps.publicUrl(),
    metricsUrl: metrics?.url,
    reloadTls: config.tls
      ? async () => {
          const pair = await readTls(config.tls as NonNullable<ServerConfig['tls']>);
          // Throws on a bad pair (unparsable, or a key that is not the certificate's): the
          // context in use stays.
          (app.server as unknown as HttpsServer).setSecureContext(pair);
          app.log.info({ cert: config.tls?.certPath }, 'TLS certificate reloaded');
        }
      : undefined,
    async close() {
      clearInterval(gc);
      await metrics?.close();
      await app.close();
      await deps.worker.stop();
      await deps.db.destroy();
      deps.store.close();
      await lock.release();
    },
  };
}
