// What a person is told when single sign-on sent them back with ?sso_error=<code> (the server
// logs the precise reason; docs/identity.md lists the codes).

const MESSAGES: Record<string, string> = {
  sso_not_configured:
    'Single sign-on is not set up for your email’s domain. Sign in with your password, or ask an admin.',
  unsolicited_response:
    'Start single sign-on from this page, not from your identity provider’s portal: Guard accepts only sign-ins it started.',
  unknown_request: 'That single sign-on attempt expired or was already used. Try again.',
  replayed_assertion: 'That single sign-on answer was already used. Try again.',
  invalid_response:
    'Your identity provider’s answer could not be verified. Try again; if it happens again, ask an admin to check the single sign-on settings.',
  wrong_issuer:
    'Your identity provider’s answer does not match Guard’s single sign-on settings. Ask an admin to check them.',
  wrong_recipient:
    'Your identity provider’s answer does not match Guard’s single sign-on settings. Ask an admin to check them.',
  expired:
    'Your identity provider’s answer was too old when it arrived. Try again; if it happens again, a clock is wrong.',
  not_yet_valid: 'Your identity provider’s answer was not valid yet when it arrived: a clock is wrong. Ask an admin.',
  no_email: 'Your identity provider sent no email address for you. Ask an admin to check the single sign-on settings.',
  domain_not_allowed: 'Your email’s domain may not sign in to this organisation through single sign-on.',
  user_deactivated: 'Your account was deactivated by your organisation. Ask its admins.',
};

/** The message for `?sso_error=` of the current URL, or undefined when there is none. */
export function ssoErrorMessage(search: string): string | undefined {
  const code = new URLSearchParams(search).get('sso_error');
  if (!code) return undefined;
  return MESSAGES[code] ?? `Single sign-on failed (${code.slice(0, 40)}). Try again, or ask an admin.`;
}
