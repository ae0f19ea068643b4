// How deliveries authenticate to the receiver and which TLS they speak (DESIGN §5 contract —
// endpoint TLS): None, HTTP Basic or OAuth2 client credentials; a client certificate with its
// key (mTLS) and a CA bundle for a receiver on a private PKI. Secrets already set are never
// shown: on edit, an empty password, client secret or key keeps the one stored.

import { useId } from 'react';
import { TextField } from '../../../../components/text-field.tsx';

export type AuthKind = 'none' | 'basic' | 'oauth2_client_credentials';

/** The section's state, as typed. */
export interface TransportState {
  auth: AuthKind;
  username: string;
  password: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  audience: string;
  clientCertificate: string;
  clientKey: string;
  removeClientCertificate: boolean;
  caCertificates: string;
  removeCaCertificates: boolean;
}

/** What the endpoint has now (on edit): shown, never its secrets. */
export interface TransportCurrent {
  auth: AuthKind;
  clientCertificate: { subject: string; not_after: string } | null;
  caCertificates: { count: number } | null;
}

export const NO_TRANSPORT: TransportCurrent = { auth: 'none', clientCertificate: null, caCertificates: null };

export type TransportErrors = Partial<
  Record<
    'password' | 'tokenUrl' | 'clientId' | 'clientSecret' | 'clientKey' | 'clientCertificate' | 'caCertificates',
    string
  >
>;

const AUTH_CHOICES: readonly [AuthKind, string, string][] = [
  ['none', 'None', 'Guard signs every delivery; a custom Authorization header above also works.'],
  ['basic', 'HTTP Basic', 'A username and password in every request.'],
  [
    'oauth2_client_credentials',
    'OAuth2 client credentials',
    'Guard gets an access token from your token URL and sends it as a Bearer token; a 401 fetches a new one.',
  ],
];

function PemField({
  label,
  hint,
  value,
  error,
  onChange,
}: {
  label: string;
  hint: string;
  value: string;
  error: string | undefined;
  onChange: (text: string) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        className="pem"
        rows={4}
        spellCheck={false}
        autoComplete="off"
        value={value}
        placeholder="-----BEGIN …-----"
        aria-invalid={error ? true : undefined}
        aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}
        onChange={(e) => onChange(e.target.value)}
      />
      <p className="hint" id={`${id}-hint`}>
        {hint}
      </p>
      {error && (
        <p className="error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** A password or client secret: never shown once set; `kept`: one is stored, and empty keeps it. */
function SecretField({
  label,
  value,
  kept,
  error,
  onChange,
}: {
  label: string;
  value: string;
  kept: boolean;
  error: string | undefined;
  onChange: (text: string) => void;
}) {
  return (
    <TextField
      label={label}
      type="password"
      autoComplete="new-password"
      value={value}
      placeholder={kept ? 'unchanged' : ''}
      hint={kept ? 'Stored sealed, never shown. Empty: keep the one set.' : 'Stored sealed, never shown again.'}
      error={error}
      onChange={(e) => onChange(e.target.value)}
    />
  );
}

export function TransportFields({
  state,
  current,
  errors,
  onChange,
}: {
  state: TransportState;
  current: TransportCurrent;
  errors: TransportErrors;
  onChange: (patch: Partial<TransportState>) => void;
}) {
  const authName = useId();
  const keeps = (kind: AuthKind) => current.auth === kind;
  const cert = current.clientCertificate;
  return (
    <fieldset>
      <legend>Receiver authentication and TLS</legend>
      <p className="hint">
        For receivers that ask for more than a signed request: credentials, a client certificate, a private CA.
      </p>
      <div role="radiogroup" aria-label="Authentication">
        {AUTH_CHOICES.map(([kind, label, hint]) => (
          <div key={kind} className="check-row">
            <label className="checkbox">
              <input
                type="radio"
                name={authName}
                checked={state.auth === kind}
                onChange={() => onChange({ auth: kind })}
              />
              {label}
            </label>
            <span className="hint"> {hint}</span>
          </div>
        ))}
      </div>
      {state.auth === 'basic' && (
        <>
          <TextField
            label="Username"
            value={state.username}
            autoComplete="off"
            onChange={(e) => onChange({ username: e.target.value })}
          />
          <SecretField
            label="Password"
            value={state.password}
            kept={keeps('basic')}
            error={errors.password}
            onChange={(password) => onChange({ password })}
          />
        </>
      )}
      {state.auth === 'oauth2_client_credentials' && (
        <>
          <TextField
            label="Token URL"
            type="url"
            inputMode="url"
            value={state.tokenUrl}
            autoComplete="off"
            spellCheck={false}
            placeholder="https://idp.example.com/oauth2/token"
            error={errors.tokenUrl}
            onChange={(e) => onChange({ tokenUrl: e.target.value })}
          />
          <TextField
            label="Client ID"
            value={state.clientId}
            autoComplete="off"
            spellCheck={false}
            error={errors.clientId}
            onChange={(e) => onChange({ clientId: e.target.value })}
          />
          <SecretField
            label="Client secret"
            value={state.clientSecret}
            kept={keeps('oauth2_client_credentials')}
            error={errors.clientSecret}
            onChange={(clientSecret) => onChange({ clientSecret })}
          />
          <TextField
            label="Scope (optional)"
            value={state.scope}
            autoComplete="off"
            spellCheck={false}
            placeholder="webhooks:write"
            onChange={(e) => onChange({ scope: e.target.value })}
          />
          <TextField
            label="Audience (optional)"
            value={state.audience}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => onChange({ audience: e.target.value })}
          />
        </>
      )}
      {cert && (
        <div className="check-row">
          <span>
            Client certificate: <strong>{cert.subject}</strong>, expires {new Date(cert.not_after).toLocaleDateString()}
            .
          </span>{' '}
          <label className="checkbox">
            <input
              type="checkbox"
              checked={state.removeClientCertificate}
              onChange={(e) => onChange({ removeClientCertificate: e.target.checked })}
            />
            Remove it
          </label>
        </div>
      )}
      {!state.removeClientCertificate && (
        <>
          <PemField
            label={cert ? 'New client certificate (PEM, optional)' : 'Client certificate (PEM, optional)'}
            hint="Presented when the receiver asks for one (mTLS): the leaf first, then intermediates."
            value={state.clientCertificate}
            error={errors.clientCertificate}
            onChange={(clientCertificate) => onChange({ clientCertificate })}
          />
          <PemField
            label="Its private key (PEM)"
            hint={
              cert
                ? 'Unencrypted. Empty: keep the key set (a renewed certificate for the same key).'
                : 'Unencrypted; stored sealed, never shown again.'
            }
            value={state.clientKey}
            error={errors.clientKey}
            onChange={(clientKey) => onChange({ clientKey })}
          />
        </>
      )}
      {current.caCertificates && (
        <div className="check-row">
          <span>
            CA bundle: {current.caCertificates.count}{' '}
            {current.caCertificates.count === 1 ? 'certificate' : 'certificates'}.
          </span>{' '}
          <label className="checkbox">
            <input
              type="checkbox"
              checked={state.removeCaCertificates}
              onChange={(e) => onChange({ removeCaCertificates: e.target.checked })}
            />
            Remove it (trust the system store again)
          </label>
        </div>
      )}
      {!state.removeCaCertificates && (
        <PemField
          label={current.caCertificates ? 'New CA bundle (PEM, optional)' : 'CA certificates (PEM, optional)'}
          hint="For a receiver on a private PKI: its certificate must chain to one of these instead of the public CAs."
          value={state.caCertificates}
          error={errors.caCertificates}
          onChange={(caCertificates) => onChange({ caCertificates })}
        />
      )}
    </fieldset>
  );
}
