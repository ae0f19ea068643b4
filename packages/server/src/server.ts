// Starting and stopping the service: open the database (SQLite in the data dir, or the
// PostgreSQL database that replicas share) and the data dir (master key, object store), sweep
// what a crash left, listen (the API, and /metrics on its own address), run maintenance on a
// timer (expired uploads, delivery retention, PostgreSQL's monthly partitions: each on one
// replica at a time), and on SIGTERM/SIGINT stop accepting, finish in-flight requests and
// close the database.

import { readFile } from 'node:fs/promises';
import type { Server as HttpsServer } from 'node:https';
import { availableParallelism } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { ArchivePool } from './analysis/index.ts';
import { buildApp } from './app.ts';
import { BundleRequestsRepository, CommandHub } from './bundle-requests/index.ts';
import { runWeeklySchedules } from './collection-schedule/index.ts';
import type { ServerConfig } from './config.ts';
import { type Db, engineOf, exclusiveJob, openDatabase } from './db/index.ts';
import type { AppDeps } from './deps.ts';
import { DetectionPolicies } from './detection/index.ts';
import {
  INSIGHTS_CPU_BUDGET_MS,
  INSIGHTS_POLL_MS,
  INSIGHTS_THREAD_MEMORY_MB,
  INSIGHTS_TIMEOUT_MS,
  InsightsWorker,
  insightsThreads,
} from './insights/index.ts';
import { type DataDirLock, lockDataDir } from './kernel/data-dir-lock.ts';
import { createLogger, type Logger } from './kernel/logger.ts';
import { loadMasterKey } from './kernel/master-key.ts';
import { listenMetrics, type MetricsListener } from './kernel/metrics-listener.ts';
import { collectExpiredUploads, openObjectStore } from './objects/index.ts';
import { SignalOutbox } from './signals/index.ts';
import { sweepExpiredBundles } from './support/index.ts';
import { NO_TRACER, startTracing, type Tracer } from './tracing/index.ts';
import {
  announceExpiringCertificates,
  createDeliveryAgents,
  createDeliveryQueue,
  createMetrics,
  DeliveryWorker,
  ensurePartitions,
  eraseExpiredSecrets,
  pruneDeliveries,
  pruneEndpointStats,
  ReplayFeeder,
  ReplaysRepository,
  relayAuditEntries,
  sealPlaintextHeaders,
} from './webhooks/index.ts';

export interface RunningServer {
  app: FastifyInstance;
  deps: AppDeps & { worker: DeliveryWorker; analyser: InsightsWorker; feeder: ReplayFeeder };
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
  tracer: Tracer = NO_TRACER,
): Promise<AppDeps & { worker: DeliveryWorker; analyser: InsightsWorker; feeder: ReplayFeeder }> {
  // SQLite always migrates (one process owns it); replicas on PostgreSQL migrate only when told
  // (--migrate), else refuse a database that lacks this release's migrations.
  const db = await openDatabase(config, {
    migrations: config.database.engine === 'postgres' && !config.migrate ? 'verify' : 'latest',
  });
  const masterKey = loadMasterKey(config);
  const store = await openObjectStore(config.objectStore, config.dataDir, {
    key: masterKey.derive('presign'),
    publicUrl,
  });
  const metrics = createMetrics(db, now);
  const w = config.webhook;
  const queue = createDeliveryQueue(db);
  const worker = new DeliveryWorker(
    {
      queue,
      agents: createDeliveryAgents({
        allowPrivate: config.webhookAllowPrivate,
        timeoutMs: w.timeoutMs,
        extraCa,
        proxy: w.proxy,
      }),
      secretKey: masterKey.derive('webhook-secrets'),
      consoleBaseUrl: publicUrl,
      now,
      random: Math.random,
      metrics,
      log,
      tracer,
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
  // Replays are fed behind live traffic: a replay holds at most half of its endpoint's slots.
  const feeder = new ReplayFeeder(
    { replays: new ReplaysRepository(db), now, wakeDeliveries: () => worker.wake(), log },
    {
      rate: w.replayRate,
      window: Math.max(1, Math.floor(w.perEndpointConcurrency / 2)),
      intervalMs: REPLAY_FEED_MS,
      idleMs: REPLAY_IDLE_MS,
    },
  );
  const threads = insightsThreads(availableParallelism());
  const archives = new ArchivePool({
    threads,
    busyBudgetMs: INSIGHTS_CPU_BUDGET_MS,
    memoryMb: INSIGHTS_THREAD_MEMORY_MB,
  });
  const analyser = new InsightsWorker(
    { db, store, archives, now, log },
    { timeoutMs: INSIGHTS_TIMEOUT_MS, pollMs: INSIGHTS_POLL_MS, concurrency: threads },
  );
  return {
    config,
    db,
    store,
    masterKey,
    now,
    publicUrl,
    webhooks: { wake: () => worker.wake(), metrics, wakeReplays: () => feeder.wake() },
    // SQLite runs one write at a time anyway; PostgreSQL overlaps a commit with the next batch.
    outbox: new SignalOutbox(queue, { maxInFlight: engineOf(db) === 'postgres' ? 2 : 1 }),
    commands: new CommandHub(),
    detection: new DetectionPolicies(db),
    insights: { wake: () => analyser.wake(), archives },
    tracer,
    worker,
    analyser,
    feeder,
  };
}

/** How often a running replay is fed, and how often replays started by other replicas are looked for. */
const REPLAY_FEED_MS = 20;
const REPLAY_IDLE_MS = 1000;

export async function startServer(
  config: ServerConfig,
  options: { now?: () => Date; logger?: boolean; deliveryCa?: string[] } = {},
): Promise<RunningServer> {
  // --public-url, or else the address actually listened on (known only after listen()).
  let publicUrl = config.publicUrl;
  const logger = createLogger(config.logLevel, { enabled: options.logger !== false });
  // The OpenTelemetry SDK is loaded only when OTEL_* turned tracing on (config.ts).
  const tracer = config.tracing ? await startTracing(config.tracing) : NO_TRACER;
  const deps = await openDeps(
    config,
    options.now ?? (() => new Date()),
    () => {
      if (!publicUrl) throw new Error('the public URL is known once the server listens');
      return publicUrl;
    },
    logger,
    options.deliveryCa,
    tracer,
  );
  let lock: DataDirLock;
  try {
    lock = await lockDataDir(config.dataDir);
  } catch (error) {
    await deps.db.destroy();
    throw error;
  }
  const swept = await deps.store.sweepPartials();
  // This month's delivery partitions and the next ones exist before the first signal is written.
  if (engineOf(deps.db) === 'postgres')
    await exclusiveJob(deps.db, 'delivery-partitions', () => ensurePartitions(deps.db, deps.now())).catch(
      async (error: unknown) => {
        await deps.db.destroy();
        await lock.release();
        throw error;
      },
    );
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
  const shared = engineOf(deps.db) === 'postgres';
  let maintaining = false;
  const gc = setInterval(() => {
    if (maintaining) return;
    maintaining = true;
    maintain(deps, config, app.log).finally(() => {
      maintaining = false;
    });
  }, config.gcIntervalSeconds * 1000);
  gc.unref();
  // Custom header values an earlier release stored in clear are sealed before any is sent.
  const sealed = await sealPlaintextHeaders(deps.db, deps.masterKey.derive('webhook-secrets'));
  if (sealed > 0) app.log.info({ endpoints: sealed }, 'sealed custom header values stored in clear');
  // The embedded SQLite database has one owner: leases of a crashed run are released at once.
  // Replicas sharing PostgreSQL never do: the others hold live leases; a dead one's expire.
  await deps.worker.start({ releaseLeases: !shared });
  // The same for bundles whose analysis a crash cut short; queued ones are taken in order.
  await deps.analyser.start({ releaseLeases: !shared });
  deps.feeder.start();
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
      await deps.analyser.stop();
      await deps.feeder.stop();
      await deps.worker.stop();
      await deps.tracer.shutdown(); // the spans still batched are exported
      await deps.db.destroy();
      deps.store.close();
      await lock.release();
    },
  };
}

/**
 * One maintenance run, each job on one replica at a time (the others skip it): unregistered
 * uploads past their expiry, PostgreSQL's partitions ahead, old webhook secrets whose grace
 * period ended, audit entries to the endpoints that subscribe to them, bundle and delivery retention. A failing job
 * is logged and tried again at the next run.
 */
export async function maintain(
  deps: AppDeps,
  config: ServerConfig,
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void },
): Promise<void> {
  const db: Db = deps.db;
  const job = async (name: string, fn: () => Promise<void>) => {
    try {
      await exclusiveJob(db, name, fn);
    } catch (error) {
      log.error({ err: error, job: name }, 'maintenance job failed');
    }
  };
  await job('uploads-gc', async () => {
    const n = await collectExpiredUploads(deps);
    if (n > 0) log.info({ collected: n }, 'collected expired uploads');
  });
  // Reads expire bundle requests too (what a reader sees is current); this records it for the idle.
  await job('bundle-requests-expiry', async () => {
    const n = await new BundleRequestsRepository(db).expireDue(deps.now());
    if (n > 0) log.info({ expired: n }, 'bundle requests expired: their agents never took them');
  });
  if (engineOf(db) === 'postgres')
    await job('delivery-partitions', async () => {
      const made = await ensurePartitions(db, deps.now());
      if (made.length > 0) log.info({ partitions: made }, 'made delivery partitions');
    });
  // Old secrets of rotations whose grace period ended (the worker stopped using them then).
  await job('secret-rotation-expiry', async () => {
    const n = await eraseExpiredSecrets(db, deps.now());
    if (n > 0) log.info({ endpoints: n }, 'erased old webhook secrets whose grace period ended');
  });
  await job('certificate-expiry', async () => {
    const n = await announceExpiringCertificates(db, (event) => deps.outbox.write(event), deps.now());
    if (n > 0) log.info({ endpoints: n }, 'announced webhook client certificates that expire soon');
  });
  // The audit log's new entries to the endpoints that subscribe to audit.event (audit-relay.ts).
  await job('audit-relay', async () => {
    const n = await relayAuditEntries(db, (event) => deps.outbox.write(event), deps.now());
    if (n > 0) log.info({ entries: n }, 'relayed audit log entries to webhook endpoints');
  });
  await job('endpoint-stats-retention', async () => {
    await pruneEndpointStats(db, deps.now());
  });
  // Bundles past their tenant's retention are deleted like an admin's deletion (support/retention.ts).
  await job('bundle-retention', async () => {
    const r = await sweepExpiredBundles(deps, config.bundleRetention, {
      onStoreError: (error) => log.error({ err: error }, 'a deleted bundle keeps its object until the next sweep'),
    });
    if (r.expired + r.objectsRemoved > 0) log.info(r, 'deleted bundles past their retention');
  });
  // The tenants' weekly collection schedules: a slot due fires once (collection-schedule/).
  await job('collection-schedule', async () => {
    const r = await runWeeklySchedules(deps);
    if (r.tenants > 0) log.info(r, 'collection schedule: weekly bundle requests made');
  });
  await job('delivery-retention', async () => {
    const r = await pruneDeliveries(db, deps.now(), config.deliveryRetention);
    if (r.attempts + r.deliveries + r.partitions.length > 0) log.info(r, 'pruned old deliveries');
  });
}
