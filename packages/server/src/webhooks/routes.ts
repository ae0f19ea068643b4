// Webhook endpoints API (DESIGN §5 contract — endpoint API; the console uses it too), one
// router per resource:
//   endpoints/    POST, GET /v1/webhooks/endpoints; GET, PATCH, DELETE …/{id}; POST …/{id}/test
//   deliveries/   GET /v1/webhooks/endpoints/{id}/deliveries; GET /v1/webhooks/deliveries/{id};
//                 GET …/{id}/attempts/{n}; POST …/{id}/redeliver; GET /v1/signals/{id}/deliveries
//   replays/      POST /v1/webhooks/endpoints/{id}/replay; GET …/{id}/replays;
//                 GET /v1/webhooks/replays/{id}; POST …/{id}/cancel
//   listen/       GET /v1/webhooks/listen (Server-Sent Events, `guard listen`); POST …/listen/trigger

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WebhookContext, WebhooksDeps } from './context.ts';
import { deliveryRoutes } from './deliveries/routes.ts';
import { DeliveriesRepository } from './deliveries-repository.ts';
import { endpointRoutes } from './endpoints/routes.ts';
import { EndpointsRepository } from './endpoints-repository.ts';
import { listenRoutes } from './listen/routes.ts';
import { replayRoutes } from './replays/routes.ts';
import { ReplaysRepository } from './replays-repository.ts';

export const webhookRoutes: FastifyPluginAsyncTypebox<WebhooksDeps> = async (app, deps) => {
  const ctx: WebhookContext = {
    endpoints: new EndpointsRepository(deps.db),
    deliveries: new DeliveriesRepository(deps.db),
    replays: new ReplaysRepository(deps.db),
    db: deps.db,
    secretKey: deps.masterKey.derive('webhook-secrets'),
    allowPrivate: deps.config.webhookAllowPrivate,
    now: deps.now,
    disableAfterMs: deps.config.webhook.disableAfterMs,
    consoleBaseUrl: deps.publicUrl,
    outbox: deps.outbox,
    wakeDeliveries: deps.wakeDeliveries,
    wakeReplays: deps.webhooks.wakeReplays,
  };
  await app.register(endpointRoutes, ctx);
  await app.register(deliveryRoutes, ctx);
  await app.register(replayRoutes, ctx);
  await app.register(listenRoutes, deps);
};
