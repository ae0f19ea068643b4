// Delivery routes: admins and members read an endpoint's deliveries and their attempts;
// admins redeliver (same Guard-Delivery).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireTenantUser } from '../../auth/index.ts';
import { ErrorResponses, IdParams } from '../../route-schemas.ts';
import type { WebhookContext } from '../context.ts';
import { listDeliveries, redeliver, showDelivery } from './handlers.ts';
import { DeliveryDetail, DeliveryList, DeliveryListQuery, DeliveryView } from './schemas.ts';

export const deliveryRoutes: FastifyPluginAsyncTypebox<WebhookContext> = async (app, ctx) => {
  app.get(
    '/v1/webhooks/endpoints/:id/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: "An endpoint's deliveries, newest first",
        params: IdParams,
        querystring: DeliveryListQuery,
        response: { 200: DeliveryList, ...ErrorResponses },
      },
    },
    async (req) => listDeliveries(ctx, requireTenantUser(req, ['admin', 'member']), req.params.id, req.query),
  );

  app.get(
    '/v1/webhooks/deliveries/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'A delivery with every attempt: status, duration, response excerpt, error',
        params: IdParams,
        response: { 200: DeliveryDetail, ...ErrorResponses },
      },
    },
    async (req) => showDelivery(ctx, requireTenantUser(req, ['admin', 'member']), req.params.id),
  );

  app.post(
    '/v1/webhooks/deliveries/:id/redeliver',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Send a delivery again now, with the same Guard-Delivery (admin)',
        params: IdParams,
        response: { 202: DeliveryView, ...ErrorResponses },
      },
    },
    async (req, reply) => reply.code(202).send(await redeliver(ctx, requireTenantUser(req, ['admin']), req.params.id)),
  );
};
