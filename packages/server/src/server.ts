// Starting and stopping the service: open the data dir (database, master key, object
// store), sweep what a crash left, listen (the API, and /metrics on its own address), collect
// expired uploads on a timer, and on SIGTERM/SIGINT stop accepting, finish in-flight requests
// and close the database.

import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { BundleRequestsRepository, CommandHub } from './bundle-requests/index.ts';
import type { ServerConfig } from './config.ts';
import { type DataDirLock, lockDataDir } from './data-dir-lock.ts';
import { openDatabase } from './db/index.ts';
import type { AppDeps } from './deps.ts';
import { INSIGHTS_POLL_MS, INSIGHTS_TIMEOUT_MS, InsightsWorker } from './insights/index.ts';
import { createLogger, type Logger } from './logger.ts';
import { loadOrCreateMasterKey } from './master-key.ts';
import { listenMetrics, type MetricsListener } from './metrics-listener.ts';
import { collectExpiredUploads, FsObjectStore } from './objects/index.ts';
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
  deps: AppDeps & { worker: DeliveryWorker; analyser: InsightsWorker };
  url: string;
  /** http://HOST:PORT/metrics, or undefined when metrics are not served. */
  metricsUrl: string | undefined;
  close(): Promise<void>;
}

export async function openDeps(
  config: ServerConfig,
  now: () => Date,
  publicUrl: () => string,
  log: Logger,
  extraCa?: string[],
): Promise<AppDeps & { worker: DeliveryWorker; analyser: InsightsWorker }> {
  const db = await openDatabase(config.dataDir);
  const masterKey = loadOrCreateMasterKey(config.dataDir);
  const store = new FsObjectStore(join(config.dataDir, 'objects'));
  await store.init();
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
  const analyser = new InsightsWorker(
    { db, store, now, log },
    { timeoutMs: INSIGHTS_TIMEOUT_MS, pollMs: INSIGHTS_POLL_MS },
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
    commands: new CommandHub(),
    insights: { wake: () => analyser.wake() },
    worker,
    analyser,
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
  const app = await buildApp(deps, { logger });
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
  publicUrl ??= `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  const requests = new BundleRequestsRepository(deps.db);
  const gc = setInterval(() => {
    collectExpiredUploads(deps).then(
      (n) => n > 0 && app.log.info({ collected: n }, 'collected expired uploads'),
      (error) => app.log.error({ err: error }, 'upload collection failed'),
    );
    // Reads expire requests too (what a reader sees is current); this records it for the idle.
    requests.expireDue(deps.now()).then(
      (n) => n > 0 && app.log.info({ expired: n }, 'bundle requests expired: their agents never took them'),
      (error) => app.log.error({ err: error }, 'bundle request expiry failed'),
    );
  }, config.gcIntervalSeconds * 1000);
  gc.unref();
  // Custom header values an earlier release stored in clear are sealed before any is sent.
  const sealed = await sealPlaintextHeaders(deps.db, deps.masterKey.derive('webhook-secrets'));
  if (sealed > 0) app.log.info({ endpoints: sealed }, 'sealed custom header values stored in clear');
  // The embedded SQLite database has one owner: leases of a crashed run are released at once.
  await deps.worker.start({ releaseLeases: true });
  // The same for bundles whose analysis a crash cut short; queued ones are taken in order.
  await deps.analyser.start({ releaseLeases: true });
  return {
    app,
    deps,
    url: deps.publicUrl(),
    metricsUrl: metrics?.url,
    async close() {
      clearInterval(gc);
      await metrics?.close();
      await app.close();
      await deps.analyser.stop();
      await deps.worker.stop();
      await deps.db.destroy();
      await lock.release();
    },
  };
}
