// Who an ID token vouches for, as a pure policy: a verified email of one of the connection's
// domains, and the provider's groups when it sent them. Anything else is a refusal with the
// code the console shows (sso_error).

import type { SsoIdentity } from '../members.ts';

export type ClaimsRefusal = 'email_missing' | 'email_unverified' | 'wrong_domain';

/** Groups beyond these are not read (a provider sending more is misconfigured). */
const MAX_GROUPS = 1000;
const MAX_GROUP_LENGTH = 512;
const MAX_EMAIL_LENGTH = 254;

/** The domain of an email (after its last @), lower case; undefined when it has none. */
export function emailDomain(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  if (at < 1 || at === email.length - 1) return undefined;
  return email
    .slice(at + 1)
    .trim()
    .toLowerCase();
}

/**
 * The identity of verified claims, or why it is refused. The email must be verified:
 * `email_verified: true`, or, only when there is no email_verified at all, Microsoft Entra ID's
 * `xms_edov: true` (the email's domain is verified by the Entra tenant; Entra sends no
 * email_verified). An email claim that is absent,
 * not a string or too long is missing.
 */
export function identityOf(
  claims: Record<string, unknown>,
  domains: readonly string[],
): SsoIdentity | { refused: ClaimsRefusal } {
  const email = claims.email;
  if (typeof email !== 'string' || email.length > MAX_EMAIL_LENGTH || !emailDomain(email))
    return { refused: 'email_missing' };
  const verified = claims.email_verified === undefined ? claims.xms_edov === true : claims.email_verified === true;
  if (!verified) return { refused: 'email_unverified' };
  const domain = emailDomain(email);
  if (!domain || !domains.includes(domain)) return { refused: 'wrong_domain' };
  return { email, groups: groupsOf(claims.groups) };
}

/** The `groups` claim when it is a list of strings; anything else counts as not sent. */
function groupsOf(value: unknown): string[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_GROUPS) return undefined;
  if (!value.every((g) => typeof g === 'string' && g.length <= MAX_GROUP_LENGTH)) return undefined;
  return value as string[];
}
