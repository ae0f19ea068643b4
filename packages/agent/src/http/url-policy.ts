// Where the agent may send an API key or bundle bytes: http(s) URLs without credentials in
// them, and plain http:// only to a loopback address.

import { isIPv4, isIPv6 } from 'node:net';
import { AgentError } from '../errors.ts';

/** 127.0.0.0/8, ::1 and the name localhost (the WHATWG parser already normalised 127.1, 0x7f.1…). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost') return true;
  if (isIPv4(host)) return host.split('.')[0] === '127';
  if (isIPv6(host)) return host === '::1';
  return false;
}

/**
 * Checks a URL the agent is about to send credentials or bundle bytes to: http(s) only, no
 * user:password, and plain http:// only to a loopback address (a bundle and an API key are
 * never sent in clear text over a network). `what` names the URL in messages.
 */
export function checkTransportUrl(raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AgentError('usage', `${what} ${JSON.stringify(raw)} is not a valid absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new AgentError('usage', `${what} ${raw} must be an https:// URL`);
  if (url.username || url.password) throw new AgentError('usage', `${what} must not carry a user name or password`);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    throw new AgentError(
      'insecure_url',
      `refusing ${what} ${url.origin}: plain http:// is allowed only to a loopback address ` +
        '(127.0.0.0/8, ::1, localhost); use https://',
    );
  return url;
}

/** A service base URL: checked as above, no query or fragment, without a trailing slash. */
export function normaliseBaseUrl(raw: string, what: string): string {
  const url = checkTransportUrl(raw.trim(), what);
  if (url.search || url.hash) throw new AgentError('usage', `${what} must not have a query or fragment`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
