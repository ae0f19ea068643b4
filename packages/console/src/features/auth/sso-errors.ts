// What the console says when single sign-on sent the browser back without signing the person
// in: the server's sso_error code (packages/server/src/sso/, docs/identity.md) in plain words.

const MESSAGES: Record<string, string> = {
  invalid_email: 'Enter your work email (name@company.com) to sign in with SSO.',
  unknown_domain: 'Single sign-on is not set up for that email’s domain. Check the email, or use a password instead.',
  provider_unavailable:
    'Your identity provider could not be reached. Try again in a moment; if it keeps failing, ask your Guard admin to check the single sign-on settings.',
  invalid_state: 'That sign-in expired or was already used. Start again with Sign in with SSO.',
  access_denied: 'Your identity provider did not sign you in: access was denied or the sign-in was cancelled.',
  provider_error: 'Your identity provider answered with an error. Try again, or ask your Guard admin.',
  invalid_response:
    'Guard could not verify the answer of your identity provider. Start again; if it keeps failing, ask your Guard admin to check the single sign-on settings.',
  connection_changed: 'The single sign-on settings changed while you were signing in. Start again.',
  email_missing:
    'Your identity provider sent no email address for you. Ask your admin to release the email claim to Guard.',
  email_unverified:
    'Your identity provider did not confirm that your email address is verified, so Guard cannot sign you in with it.',
  wrong_domain:
    'Your identity provider signed you in with an email of a domain your organisation does not allow in Guard.',
  user_deactivated: 'Your account was deactivated by your organisation. Ask its admins.',
  session_refused: 'Your account changed while you were signing in. Start again.',
  // SAML's refusals (sso/saml/): the ones OIDC shares (invalid_response, user_deactivated) are above.
  sso_not_configured:
    'Single sign-on is not set up for your email’s domain. Sign in with your password, or ask an admin.',
  unsolicited_response:
    'Start single sign-on from this page, not from your identity provider’s portal: Guard accepts only sign-ins it started.',
  unknown_request: 'That single sign-on attempt expired or was already used. Try again.',
  other_browser:
    'That sign-in was started in another browser (or its cookie is gone). Start single sign-on again here.',
  replayed_assertion: 'That single sign-on answer was already used. Try again.',
  wrong_issuer:
    'Your identity provider’s answer does not match Guard’s single sign-on settings. Ask an admin to check them.',
  wrong_recipient:
    'Your identity provider’s answer does not match Guard’s single sign-on settings. Ask an admin to check them.',
  expired:
    'Your identity provider’s answer was too old when it arrived. Try again; if it happens again, a clock is wrong.',
  not_yet_valid: 'Your identity provider’s answer was not valid yet when it arrived: a clock is wrong. Ask an admin.',
  no_email: 'Your identity provider sent no email address for you. Ask an admin to check the single sign-on settings.',
  domain_not_allowed: 'Your email’s domain may not sign in to this organisation through single sign-on.',
};

/** The sentence for an sso_error code; an unknown code still gets one. */
export function ssoErrorMessage(code: string): string {
  return MESSAGES[code] ?? 'Single sign-on did not sign you in. Start again, or sign in with your password.';
}

/** Where the browser starts single sign-on for `email` (the server picks OIDC or SAML by its domain). */
export function ssoStartUrl(email: string): string {
  return `/v1/auth/sso/start?email=${encodeURIComponent(email.trim())}`;
}
