// Replay routes: admins start (or dry-run), follow and cancel a replay of an endpoint's
// deliveries; members read them.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireTenantUser } from '../../auth/index.ts';
import { ErrorResponses, IdParams } from '../../kernel/route-schemas.ts';
import type { WebhookContext } from '../context.ts';
import { cancelReplay, listReplays, showReplay, startReplay } from './handlers.ts';
import { ReplayCount, ReplayList, ReplayView, StartReplay } from './schemas.ts';

export const replayRoutes: FastifyPluginAsyncTypebox<WebhookContext> = async (app, ctx) => {
  app.post(
    '/v1/webhooks/endpoints/:id/replay',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary:
          'Replay completed deliveries created since a time (optionally until, of one status) with their original ' +
          'Guard-Delivery, at a bounded rate behind live traffic (admin); dry_run only counts them',
        params: IdParams,
        body: StartReplay,
        response: { 200: ReplayCount, 202: ReplayView, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const r = await startReplay(ctx, requireTenantUser(req, ['admin']), req.params.id, req.body);
      return reply.code(r.code).send(r.body);
    },
  );

  app.get(
    '/v1/webhooks/endpoints/:id/replays',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary: "An endpoint's replays, newest first (the last 20)",
        params: IdParams,
        response: { 200: ReplayList, ...ErrorResponses },
      },
    },
    async (req) => listReplays(ctx, requireTenantUser(req, ['admin', 'member']), req.params.id),
  );

  app.get(
    '/v1/webhooks/replays/:id',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary: "A replay's progress: total, sent, remaining, state",
        params: IdParams,
        response: { 200: ReplayView, ...ErrorResponses },
      },
    },
    async (req) => showReplay(ctx, requireTenantUser(req, ['admin', 'member']), req.params.id),
  );

  app.post(
    '/v1/webhooks/replays/:id/cancel',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary: 'Cancel a running replay: nothing more is re-queued (admin)',
        params: IdParams,
        response: { 200: ReplayView, ...ErrorResponses },
      },
    },
    async (req) => cancelReplay(ctx, requireTenantUser(req, ['admin']), req.params.id),
  );
};
