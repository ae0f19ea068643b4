// A Fastify receiver in ES modules: a raw-body parser in the webhook route's own scope.

import { constructEvent, WebhookVerificationError } from '@guard/webhooks';
import Fastify from 'fastify';

const app = Fastify({ https: { key: process.env.TLS_KEY, cert: process.env.TLS_CERT } });
app.register(async (scope) => {
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  scope.post('/guard/webhook', async (req, reply) => {
    try {
      const event = constructEvent(req.body, req.headers, process.env.GUARD_WEBHOOK_SECRET);
      console.log(
        JSON.stringify({ ok: true, signal_id: event.data.signal_id, delivery: req.headers['guard-delivery'] }),
      );
      return reply.code(204).send();
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      console.log(JSON.stringify({ ok: false, code: err.code }));
      return reply.code(400).send({ error: err.code });
    }
  });
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log(JSON.stringify({ listening: true }));
