// Compiled by TypeScript 5.0 against the installed package's declarations (ES module side).
import {
  constructEvent,
  type SignalCreatedEvent,
  sign,
  verifySignature,
  WebhookVerificationError,
} from '@guard/webhooks';
import { constructEventAsync, signAsync, verifySignatureAsync } from '@guard/webhooks/web';

export function receive(body: Uint8Array): number | string {
  const headers: Record<string, string> = { 'guard-signature': sign(body, 'whsec_x') };
  try {
    const event: SignalCreatedEvent = constructEvent(body, headers, ['whsec_new', 'whsec_old'], {
      toleranceSeconds: 300,
    });
    verifySignature(body, headers['guard-signature'], 'whsec_x');
    return event.data.severity;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.code;
    throw err;
  }
}

export async function edge(body: ArrayBuffer, h: { get(name: string): string | null }): Promise<string> {
  const event = await constructEventAsync(body, h, 'whsec_x');
  await verifySignatureAsync(body, h.get('guard-signature') ?? undefined, 'whsec_x');
  return `${event.data.signal_id} ${await signAsync(body, 'whsec_x')}`;
}
