// A Next.js App Router route handler, as the SDK's README shows it (Node runtime).
import { constructEvent, WebhookVerificationError } from '@guard/webhooks';

export async function POST(request) {
  const rawBody = await request.text(); // the exact body: never request.json() first
  try {
    const event = constructEvent(rawBody, request.headers, process.env.GUARD_WEBHOOK_SECRET);
    console.log(
      JSON.stringify({ ok: true, signal_id: event.data.signal_id, delivery: request.headers.get('guard-delivery') }),
    );
    return new Response(null, { status: 204 });
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    console.log(JSON.stringify({ ok: false, code: err.code }));
    return new Response(err.code, { status: 400 });
  }
}
