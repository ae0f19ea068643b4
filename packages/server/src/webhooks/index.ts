// Webhooks: the endpoints API, and the delivery machinery (worker, HTTP client, metrics)
// that server.ts wires up.

export { relayAuditEntries } from './audit-relay.ts';
export { announceExpiringCertificates } from './certificate-expiry.ts';
export { ensurePartitions } from './delivery-partitions-postgres.ts';
export type { DeliveryQueue, EnqueueResult, OutboxEntry } from './delivery-queue.ts';
export { createDeliveryQueue } from './delivery-queue-engine.ts';
export { PostgresDeliveryQueue } from './delivery-queue-postgres.ts';
export { SqliteDeliveryQueue } from './delivery-queue-sqlite.ts';
export { sealPlaintextHeaders } from './endpoint-headers.ts';
export { pruneEndpointStats } from './endpoint-health.ts';
export { eraseExpiredSecrets } from './endpoints-repository.ts';
export { createDeliveryAgents } from './http-client.ts';
export { createMetrics, type WebhookMetrics } from './metrics.ts';
export { ReplayFeeder } from './replay-feeder.ts';
export { ReplaysRepository } from './replays-repository.ts';
export { effectiveRetentionDays, pruneDeliveries, type RetentionPolicy } from './retention.ts';
export { webhookRoutes } from './routes.ts';
export { NEW_ENDPOINT_DEFAULTS } from './subscriptions.ts';
export { DeliveryWorker } from './worker.ts';
