// Delivery routes: admins and members read the tenant's delivery log, an endpoint's deliveries
// and their attempts; admins redeliver (same Guard-Delivery).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireTenantUser } from '../../auth/index.ts';
import { ErrorResponses, IdParams } from '../../kernel/route-schemas.ts';
import type { WebhookContext } from '../context.ts';
import { deliveryLog, listDeliveries, redeliver, showAttempt, showDelivery, signalDeliveries } from './handlers.ts';
import {
  AttemptDetail,
  AttemptParams,
  DeliveryDetail,
  DeliveryList,
  DeliveryListQuery,
  DeliveryLog,
  DeliveryLogQuery,
  DeliveryView,
  SignalDeliveries,
} from './schemas.ts';

export const deliveryRoutes: FastifyPluginAsyncTypebox<WebhookContext> = async (app, ctx) => {
  app.get(
    '/v1/webhooks/deliveries',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary:
          "The tenant's delivery log across its endpoints, newest first; search by signal, endpoint, status word " +
          'and creation time (keyset paging: pass next_before as before, with the same filters)',
        querystring: DeliveryLogQuery,
        response: { 200: DeliveryLog, ...ErrorResponses },
      },
    },
    async (req) => deliveryLog(ctx, requireTenantUser(req, ['admin', 'member']), req.query),
  );

  app.get(
    '/v1/webhooks/endpoints/:id/deliveries',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary: "An endpoint's deliveries, newest first; filter by console status word (status) or stored state",
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
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary: 'A delivery with every attempt: status, duration, response excerpt, error',
        params: IdParams,
        response: { 200: DeliveryDetail, ...ErrorResponses },
      },
    },
    async (req) => showDelivery(ctx, requireTenantUser(req, ['admin', 'member']), req.params.id),
  );

  app.get(
    '/v1/webhooks/deliveries/:id/attempts/:n',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary:
          'One attempt: the request as sent (headers with Guard-Signature, body) and the response or error. ' +
          'Custom header values are masked for members',
        params: AttemptParams,
        response: { 200: AttemptDetail, ...ErrorResponses },
      },
    },
    async (req) => showAttempt(ctx, requireTenantUser(req, ['admin', 'member']), req.params.id, req.params.n),
  );

  app.get(
    '/v1/signals/:id/deliveries',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['signals'],
        summary: "A signal's delivery to each endpoint, with the console status word",
        params: IdParams,
        response: { 200: SignalDeliveries, ...ErrorResponses },
      },
    },
    async (req) => signalDeliveries(ctx, requireTenantUser(req, ['admin', 'member']), req.params.id),
  );

  app.post(
    '/v1/webhooks/deliveries/:id/redeliver',
    {
      config: { scope: 'webhooks' },
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
