// An endpoint's authentication and TLS towards its receiver, as the endpoint page lists them
// (never a secret), and a notice while its client certificate is near its expiry or past it:
// Guard announces endpoint.certificate_expiring 30, 7 and 1 days before.

import type { Endpoint } from '../api/endpoints.ts';

const DAY_MS = 86_400_000;
/** A client certificate this close to its expiry is flagged on the page. */
export const CERTIFICATE_WARNING_DAYS = 30;

function daysLeft(notAfter: string, now: number): number {
  return Math.floor((Date.parse(notAfter) - now) / DAY_MS);
}

/** The `dt`/`dd` rows of the endpoint's facts: authentication, client certificate, CA bundle. */
export function TransportFacts({ endpoint: e, now = Date.now() }: { endpoint: Endpoint; now?: number }) {
  const auth = e.auth;
  const cert = e.tls.client_certificate;
  const ca = e.tls.ca_certificates;
  const left = cert ? daysLeft(cert.not_after, now) : 0;
  return (
    <>
      <dt>Authentication</dt>
      <dd>
        {auth === null ? (
          'signature only'
        ) : auth.type === 'basic' ? (
          <>
            HTTP Basic as <span className="mono">{auth.username}</span>
          </>
        ) : (
          <>
            OAuth2 client credentials: client <span className="mono">{auth.client_id}</span> from{' '}
            <span className="mono">{auth.token_url}</span>
            {auth.scope && (
              <>
                , scope <span className="mono">{auth.scope}</span>
              </>
            )}
          </>
        )}
      </dd>
      <dt>Client certificate</dt>
      <dd>
        {cert ? (
          <>
            <span className="mono">{cert.subject}</span>{' '}
            <span className={`badge ${left < 0 ? 'danger' : left < CERTIFICATE_WARNING_DAYS ? 'warn' : 'neutral'}`}>
              {left < 0 ? 'expired' : `expires in ${left} ${left === 1 ? 'day' : 'days'}`}
            </span>
            <span className="hint">
              {' '}
              issued by {cert.issuer}, until {new Date(cert.not_after).toUTCString()}
            </span>
          </>
        ) : (
          'none'
        )}
      </dd>
      <dt>Trusted CAs</dt>
      <dd>
        {ca ? (
          <>
            this endpoint's own bundle: <span className="mono">{ca.subjects.join('; ')}</span>
          </>
        ) : (
          'the system store'
        )}
      </dd>
    </>
  );
}

/** A notice while the client certificate expires within CERTIFICATE_WARNING_DAYS, or has expired. */
export function CertificateNotice({ endpoint: e, now = Date.now() }: { endpoint: Endpoint; now?: number }) {
  const cert = e.tls.client_certificate;
  if (!cert) return null;
  const left = daysLeft(cert.not_after, now);
  if (left >= CERTIFICATE_WARNING_DAYS) return null;
  return (
    <div className={`notice ${left < 0 ? 'error' : 'warn'}`} role="status">
      <p>
        {left < 0
          ? 'The client certificate has expired: receivers that check it refuse every delivery.'
          : `The client certificate expires in ${left} ${left === 1 ? 'day' : 'days'}.`}{' '}
        Edit the endpoint to give it a renewed certificate.
      </p>
    </div>
  );
}
