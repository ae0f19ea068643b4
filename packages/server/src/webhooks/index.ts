// Webhooks: the endpoints API, and the delivery machinery (worker, HTTP client, metrics)
// that server.ts wires up.
export { createDeliveryAgent } from './http-client.ts';
export { createMetrics, type WebhookMetrics } from './metrics.ts';
export { webhookRoutes } from './routes.ts';
export { DeliveryWorker } from './worker.ts';
