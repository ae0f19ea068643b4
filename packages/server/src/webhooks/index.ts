// Webhooks: the endpoints API, and the delivery machinery (worker, HTTP client, metrics)
// that server.ts wires up.
export type { DeliveryQueue, EnqueueResult, OutboxEntry } from './delivery-queue.ts';
export { SqliteDeliveryQueue } from './delivery-queue-sqlite.ts';
export { sealPlaintextHeaders } from './endpoint-headers.ts';
export { createDeliveryAgent } from './http-client.ts';
export { createMetrics, type WebhookMetrics } from './metrics.ts';
export { webhookRoutes } from './routes.ts';
export { DeliveryWorker } from './worker.ts';
