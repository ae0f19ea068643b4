// A Hono receiver on the WebCrypto entry (@guard/webhooks/web), served on Node by @hono/node-server.
import https from 'node:https';
import { constructEventAsync, WebhookVerificationError } from '@guard/webhooks/web';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.post('/guard/webhook', async (c) => {
  try {
    const event = await constructEventAsync(
      await c.req.arrayBuffer(),
      c.req.raw.headers,
      process.env.GUARD_WEBHOOK_SECRET,
    );
    console.log(
      JSON.stringify({ ok: true, signal_id: event.data.signal_id, delivery: c.req.header('guard-delivery') }),
    );
    return c.body(null, 204);
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    console.log(JSON.stringify({ ok: false, code: err.code }));
    return c.text(err.code, 400);
  }
});
serve(
  {
    fetch: app.fetch,
    port: Number(process.env.PORT),
    hostname: '127.0.0.1',
    createServer: https.createServer,
    serverOptions: { key: process.env.TLS_KEY, cert: process.env.TLS_CERT },
  },
  () => console.log(JSON.stringify({ listening: true })),
);
