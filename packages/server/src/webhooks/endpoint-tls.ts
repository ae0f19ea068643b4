// An endpoint's TLS settings (DESIGN §5 contract — endpoint TLS): a client certificate with
// its key, presented when the receiver asks for one (mTLS), and a CA bundle that replaces the
// system store for this endpoint's receiver (a private PKI). The certificate chain and the CA
// bundle are public and stored in clear; the key is sealed like the secret (AES-256-GCM, the
// endpoint id and a purpose as associated data) and never returned. Views show the client
// certificate's subject, issuer and validity, and how many CAs the bundle holds.

import { createPrivateKey, X509Certificate } from 'node:crypto';
import { badRequest } from '../kernel/errors.ts';
import { open, seal } from '../kernel/secret-box.ts';

/** A PEM chain or bundle: a few certificates; a private CA bundle rarely passes a few KiB. */
export const TLS_PEM_MAX_LENGTH = 65_536;
/** Certificates at most in a client chain or a CA bundle. */
export const TLS_CERTIFICATES_MAX = 32;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

const keyAad = (endpointId: string) => `${endpointId}/tls-client-key`;

export function sealClientKey(key: Buffer, endpointId: string, pem: string): string {
  return seal(key, pem, keyAad(endpointId));
}

export function openClientKey(key: Buffer, endpointId: string, sealed: string): string {
  return open(key, sealed, keyAad(endpointId));
}

/** The certificates of a PEM text, parsed, in order; throws 400 `code` naming `field` when any is not one. */
export function parseCertificates(pem: string, field: string, code: string): X509Certificate[] {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw badRequest(`${field} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`, code);
  if (blocks.length > TLS_CERTIFICATES_MAX)
    throw badRequest(`${field} holds more than ${TLS_CERTIFICATES_MAX} certificates`, code);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw badRequest(`${field}: certificate ${i + 1} is not a valid X.509 certificate`, code);
    }
  });
}

/** What the create and edit requests may say about TLS; null removes a setting. */
export interface TlsInput {
  tls_client_certificate?: string | null;
  tls_client_key?: string | null;
  tls_ca_certificates?: string | null;
}

/**
 * The columns a request's TLS fields set, checked. `currentKey` is the endpoint's key as it is
 * (opened; undefined on create or when it has none): a renewed certificate for the same key
 * may come alone. Removing the certificate or the key removes the pair.
 */
export function tlsChanges(
  secretKey: Buffer,
  endpointId: string,
  body: TlsInput,
  currentKey: string | undefined,
): {
  tls_client_certificate?: string | null;
  tls_client_key_sealed?: string | null;
  tls_ca_certificates?: string | null;
  tls_client_certificate_expires_at?: string | null;
  tls_client_certificate_alerted?: number;
} {
  const changes: ReturnType<typeof tlsChanges> = {};
  const { tls_client_certificate: cert, tls_client_key: key } = body;
  if (cert === null || key === null) {
    if ((cert ?? key ?? null) !== null)
      throw badRequest(
        'tls_client_certificate and tls_client_key are removed together (null): one cannot be presented without the other',
        cert === null ? 'invalid_tls_client_key' : 'invalid_tls_client_certificate',
      );
    changes.tls_client_certificate = null;
    changes.tls_client_key_sealed = null;
    changes.tls_client_certificate_expires_at = null;
    changes.tls_client_certificate_alerted = 0;
  } else if (cert !== undefined || key !== undefined) {
    if (cert === undefined)
      throw badRequest(
        'tls_client_key needs its tls_client_certificate in the same request',
        'invalid_tls_client_certificate',
      );
    const pem = key ?? currentKey;
    if (pem === undefined)
      throw badRequest('tls_client_certificate needs its tls_client_key (PEM)', 'invalid_tls_client_key');
    const [leaf] = parseCertificates(cert, 'tls_client_certificate', 'invalid_tls_client_certificate');
    let privateKey: ReturnType<typeof createPrivateKey>;
    try {
      privateKey = createPrivateKey(pem);
    } catch {
      throw badRequest(
        'tls_client_key is not an unencrypted PEM private key (PKCS #8, PKCS #1 or SEC 1)',
        'invalid_tls_client_key',
      );
    }
    if (!leaf.checkPrivateKey(privateKey))
      throw badRequest('tls_client_key does not match tls_client_certificate', 'invalid_tls_client_key');
    changes.tls_client_certificate = cert.trim();
    // A new certificate has announced nothing yet.
    changes.tls_client_certificate_expires_at = new Date(leaf.validTo).toISOString();
    changes.tls_client_certificate_alerted = 0;
    if (key !== undefined) changes.tls_client_key_sealed = sealClientKey(secretKey, endpointId, key.trim());
  }
  if (body.tls_ca_certificates !== undefined) {
    if (body.tls_ca_certificates !== null)
      parseCertificates(body.tls_ca_certificates, 'tls_ca_certificates', 'invalid_tls_ca_certificates');
    changes.tls_ca_certificates = body.tls_ca_certificates === null ? null : body.tls_ca_certificates.trim();
  }
  return changes;
}

/** What a view shows of a certificate. */
export interface CertificateSummary {
  subject: string;
  issuer: string;
  not_before: string;
  not_after: string;
  fingerprint_sha256: string;
}

export function certificateSummary(c: X509Certificate): CertificateSummary {
  return {
    subject: c.subject.replace(/\n/g, ', '),
    issuer: c.issuer.replace(/\n/g, ', '),
    not_before: new Date(c.validFrom).toISOString(),
    not_after: new Date(c.validTo).toISOString(),
    fingerprint_sha256: c.fingerprint256,
  };
}

export interface TlsView {
  client_certificate: CertificateSummary | null;
  ca_certificates: { count: number; subjects: string[] } | null;
}

/** The TLS settings as views show them: never the key. */
export function tlsView(row: { tls_client_certificate?: string | null; tls_ca_certificates?: string | null }): TlsView {
  const leaf = row.tls_client_certificate ? safeParse(row.tls_client_certificate)[0] : undefined;
  const cas = row.tls_ca_certificates ? safeParse(row.tls_ca_certificates) : undefined;
  return {
    client_certificate: leaf ? certificateSummary(leaf) : null,
    ca_certificates: cas ? { count: cas.length, subjects: cas.map((c) => c.subject.replace(/\n/g, ', ')) } : null,
  };
}

/** Parsed without throwing: stored text was checked when written. */
function safeParse(pem: string): X509Certificate[] {
  try {
    return parseCertificates(pem, '', '');
  } catch {
    return [];
  }
}

/** The TLS options a delivery connects with: undefined when the endpoint sets none. */
export interface EndpointTlsOptions {
  cert?: string;
  key?: string;
  /** Replaces the trusted roots for this endpoint. */
  ca?: string[];
}

export function endpointTlsOptions(
  secretKey: Buffer,
  row: {
    id: string;
    tls_client_certificate?: string | null;
    tls_client_key_sealed?: string | null;
    tls_ca_certificates?: string | null;
  },
): EndpointTlsOptions | undefined {
  const client = row.tls_client_certificate && row.tls_client_key_sealed;
  if (!client && !row.tls_ca_certificates) return undefined;
  return {
    ...(client
      ? {
          cert: row.tls_client_certificate as string,
          key: openClientKey(secretKey, row.id, row.tls_client_key_sealed as string),
        }
      : {}),
    ...(row.tls_ca_certificates ? { ca: row.tls_ca_certificates.match(PEM_CERTIFICATE) ?? [] } : {}),
  };
}
