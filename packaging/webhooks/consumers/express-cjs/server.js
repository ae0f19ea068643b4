// An Express receiver in CommonJS, as the SDK's README shows it: require('@guard/webhooks').
const https = require('node:https');
const express = require('express');
const { constructEvent, WebhookVerificationError } = require('@guard/webhooks');

const app = express();
app.post('/guard/webhook', express.raw({ type: 'application/json' }), (req, res) => {
  try {
    const event = constructEvent(req.body, req.headers, process.env.GUARD_WEBHOOK_SECRET);
    console.log(JSON.stringify({ ok: true, signal_id: event.data.signal_id, delivery: req.headers['guard-delivery'] }));
    res.sendStatus(204);
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    console.log(JSON.stringify({ ok: false, code: err.code }));
    res.status(400).send(err.code);
  }
});
const server = https.createServer({ key: process.env.TLS_KEY, cert: process.env.TLS_CERT }, app);
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(JSON.stringify({ listening: true })));
