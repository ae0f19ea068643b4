// How a receiver checks a delivery with @guard/webhooks (packages/webhooks/README.md).

import { CodeBlock } from '../../../components/code-block.tsx';

const SAMPLE = `import express from 'express';
import { constructEvent, WebhookVerificationError } from '@guard/webhooks';

const app = express();
// The signature covers the raw bytes: keep the body raw on this route.
app.post('/guard/webhook', express.raw({ type: 'application/json' }), (req, res) => {
  try {
    const event = constructEvent(req.body, req.headers, process.env.GUARD_WEBHOOK_SECRET);
    // Delivery is at least once: deduplicate on event.data.signal_id.
    console.log(event.data.signal_type, event.data.severity, event.data.server_name);
    res.sendStatus(204);
  } catch (err) {
    if (err instanceof WebhookVerificationError) return res.status(400).send(err.code);
    throw err;
  }
});
app.listen(8443);`;

export function VerifySample() {
  return (
    <section className="card" aria-labelledby="verify-heading">
      <h2 id="verify-heading">Verify deliveries in your receiver</h2>
      <p>
        Every delivery carries <code>Guard-Signature: sha256=…</code>, an HMAC-SHA256 of the raw body keyed with this
        endpoint's signing secret. With Guard's SDK, <code>@guard/webhooks</code>: it is not on the npm registry yet, so
        install the <code>guard-webhooks-&lt;version&gt;.tgz</code> of your Guard release with{' '}
        <code>npm install ./guard-webhooks-&lt;version&gt;.tgz</code>:
      </p>
      <CodeBlock label="Example receiver in Node.js">{SAMPLE}</CodeBlock>
      <p className="hint">
        Answer any 2xx within 15 seconds. Anything else, a redirect or a timeout is retried with backoff for about a day
        and a half, with the same Guard-Delivery.
      </p>
    </section>
  );
}
