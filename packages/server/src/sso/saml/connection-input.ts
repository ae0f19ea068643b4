// What an admin may configure as the tenant's SAML identity provider, checked before anything
// is stored: the single sign-on URL (https, or http on a loopback address for development and
// tests), one to three signing certificates (X.509 with an RSA key: two or three while the IdP
// rotates), and the email domains, lower-cased and unique.

import { X509Certificate } from 'node:crypto';
import { badRequest } from '../../kernel/errors.ts';

/** The signing certificates a connection holds: the current one, and the next while the IdP rotates. */
export const MAX_IDP_CERTIFICATES = 3;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The IdP's single sign-on URL, where AuthnRequests are sent (HTTP-Redirect binding). */
export function checkSsoUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('sso_url is not a URL', 'invalid_sso_url');
  }
  if (url.username || url.password) throw badRequest('sso_url may not carry credentials', 'invalid_sso_url');
  if (url.hash) throw badRequest('sso_url may not have a #fragment', 'invalid_sso_url');
  const loopback = LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw badRequest(
      'sso_url must be https:// (http:// only on a loopback address, for development)',
      'invalid_sso_url',
    );
  return url.toString();
}

/** A certificate as PEM, or as the bare base64 of its DER (as some IdPs show it). */
function parseCertificate(text: string): X509Certificate {
  const trimmed = text.trim();
  const pem = /^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----$/;
  if (pem.test(trimmed)) return new X509Certificate(trimmed);
  const bare = trimmed.replace(/\s+/g, '');
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(bare)) return new X509Certificate(Buffer.from(bare, 'base64'));
  throw new Error('not PEM');
}

/** The certificates in PEM, each checked: one X.509 certificate with an RSA key (what XML signatures use). */
export function checkCertificates(texts: readonly string[]): string[] {
  const pems: string[] = [];
  texts.forEach((text, i) => {
    let cert: X509Certificate;
    try {
      cert = parseCertificate(text);
    } catch {
      throw badRequest(
        `idp_certificates[${i}] is not an X.509 certificate: paste the IdP's signing certificate in PEM (-----BEGIN CERTIFICATE-----)`,
        'invalid_certificate',
      );
    }
    if (cert.publicKey.asymmetricKeyType !== 'rsa')
      throw badRequest(
        `idp_certificates[${i}] has a ${cert.publicKey.asymmetricKeyType} key: SAML signatures are verified with RSA keys only`,
        'invalid_certificate',
      );
    const pem = cert.toString().trim();
    if (!pems.includes(pem)) pems.push(pem);
  });
  return pems;
}

/** What the console shows of a certificate: whom it names, until when, and its fingerprint. */
export function describeCertificate(pem: string): { subject: string; not_after: string; sha256_fingerprint: string } {
  const cert = new X509Certificate(pem);
  return {
    subject: cert.subject.replaceAll('\n', ', '),
    not_after: new Date(cert.validTo).toISOString(),
    sha256_fingerprint: cert.fingerprint256,
  };
}

/** Email domains lower-cased, each once. */
export function checkDomains(domains: readonly string[]): string[] {
  const out = [...new Set(domains.map((d) => d.trim().toLowerCase()))];
  for (const d of out)
    if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(d))
      throw badRequest(`email_domains: "${d}" is not a domain name (example.com)`, 'invalid_domain');
  return out;
}
