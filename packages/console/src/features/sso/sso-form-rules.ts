// How the single sign-on form reads what an admin typed (the server checks the same and more).

const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Email domains typed one per line or separated by commas or spaces, lower-cased, each once. */
export function parseDomains(text: string): string[] {
  const domains = text
    .split(/[\s,;]+/)
    .map((d) => d.trim().toLowerCase().replace(/^@/, ''))
    .filter(Boolean);
  return [...new Set(domains)];
}

/** Why the domains cannot be saved, or undefined. */
export function domainsProblem(domains: readonly string[]): string | undefined {
  if (domains.length === 0) return 'Enter at least one email domain, e.g. example.com.';
  if (domains.length > 20) return 'At most 20 email domains.';
  const bad = domains.find((d) => !DOMAIN.test(d) || d.length > 253);
  return bad ? `${bad} is not a domain name (e.g. example.com).` : undefined;
}

/** Why an issuer URL cannot be used, or undefined (the server also reads its discovery document). */
export function issuerProblem(issuer: string): string | undefined {
  let url: URL;
  try {
    url = new URL(issuer.trim());
  } catch {
    return 'Enter the issuer URL, e.g. https://login.example.com.';
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(url.hostname)) return undefined;
  return 'The issuer URL must start with https://.';
}
