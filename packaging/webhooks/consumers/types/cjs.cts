// Compiled by TypeScript 5.0 against the installed package's declarations (CommonJS side).
import guard = require('@guard/webhooks');
import web = require('@guard/webhooks/web');

export function check(body: string, header: string | undefined): boolean {
  try {
    guard.verifySignature(body, header, 'whsec_x');
    return true;
  } catch (err) {
    return !(err instanceof guard.WebhookVerificationError);
  }
}
export const later: Promise<string> = web.signAsync('{}', 'whsec_x');
