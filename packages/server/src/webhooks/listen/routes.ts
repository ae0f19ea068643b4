// `guard listen` and `guard trigger` (docs/guard-listen.md): a developer's laptop receives the
// tenant's events over a stream it opens itself, so no inbound connection, no relay and no
// delivery to a private address is involved (the server never connects anywhere for it).
//   GET  /v1/webhooks/listen          Server-Sent Events of the tenant's new events (admin)
//   POST /v1/webhooks/listen/trigger  a test signal_created event for those streams (admin)
// Admins only, like writing endpoints: a stream hands out every event of the tenant.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireTenantUser, stillAuthorised } from '../../auth/index.ts';
import type { Db } from '../../db/index.ts';
import { releaseBodyDeadline } from '../../kernel/http-limits.ts';
import { ErrorResponses } from '../../kernel/route-schemas.ts';
import { parseEventFilter } from './event-filter.ts';
import { ListenFeed } from './feed-repository.ts';
import { LISTEN_RETRY_AFTER_SECONDS, ListenHub } from './hub.ts';
import { ListenHeaders, ListenQuery, ListenStreamBody, TriggerEvent, TriggeredEvent } from './schemas.ts';
import type { ListenStream } from './stream.ts';
import { triggeredSignal } from './trigger.ts';

/** What the listen routes need of the server. */
export interface ListenDeps {
  db: Db;
  now: () => Date;
  /** Base of console links in envelopes (--public-url). */
  publicUrl: () => string;
}

export const listenRoutes: FastifyPluginAsyncTypebox<ListenDeps> = async (app, deps) => {
  const feed = new ListenFeed(deps.db);
  const hub = new ListenHub({ feed, now: deps.now, consoleBaseUrl: deps.publicUrl, log: app.log });
  // Streams end with `bye` before the server waits for its connections (graceful-shutdown.ts).
  app.addHook('preClose', async () => hub.close());

  app.get(
    '/v1/webhooks/listen',
    {
      config: { scope: 'webhooks' },
      exposeHeadRoute: false,
      schema: {
        tags: ['webhooks'],
        summary:
          "Stream the tenant's new events as Server-Sent Events, each data a delivery body (admin; `guard listen`)",
        querystring: ListenQuery,
        headers: ListenHeaders,
        response: {
          200: {
            description: 'the stream (text/event-stream)',
            content: { 'text/event-stream': { schema: ListenStreamBody } },
          },
          ...ErrorResponses,
        },
      },
    },
    async (req, reply) => {
      const user = requireTenantUser(req, ['admin']);
      const events = parseEventFilter(req.query.events);
      const from = await hub.resumePoint(user.tenantId, req.headers['last-event-id']);
      let admission: ReturnType<ListenHub['admit']>;
      try {
        admission = hub.admit(user.tenantId);
      } catch (error) {
        reply.header('retry-after', String(LISTEN_RETRY_AFTER_SECONDS));
        throw error;
      }
      // From here the response is the stream's: no body deadline, no serializer.
      reply.hijack();
      releaseBodyDeadline(req.raw);
      const res = reply.raw;
      res.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no', // nginx: pass each event on at once
      });
      let stream: ListenStream | undefined;
      res.on('close', () => stream?.end('client_closed'));
      try {
        stream = await hub.start(
          res,
          admission,
          {
            events,
            stillAuthorised: () => stillAuthorised(deps.db, user, ['admin'], deps.now()),
          },
          from,
        );
      } catch (error) {
        req.log.error({ err: error }, 'listen stream failed to start');
        return;
      }
      if (res.destroyed) stream.end('client_closed');
    },
  );

  app.post(
    '/v1/webhooks/listen/trigger',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary:
          'Make a test signal_created event for the listen streams of the tenant (admin; `guard trigger`); no endpoint receives it',
        body: TriggerEvent,
        response: { 201: TriggeredEvent, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const user = requireTenantUser(req, ['admin']);
      const row = triggeredSignal(user, req.body, deps.now());
      await feed.insert(row);
      hub.wake();
      return reply.code(201).send({ signal_id: row.id, event_type: 'signal_created', received_at: row.received_at });
    },
  );
};
