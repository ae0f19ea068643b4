// Add Endpoint and edit: Name, URL (https:// checked as you leave the field and on submit),
// custom header rows, the events it receives (with a minimum severity and signal types for
// signals), an optional rate limit, and how deliveries authenticate to the receiver (Basic,
// OAuth2, a client certificate, a CA bundle). Nothing is sent while a field is wrong; the server's
// own refusal of a URL or header is shown on that field too. This file holds the form's state
// and checks; each group of fields beside it only renders.

import { ENDPOINT_DEFAULTS } from '@guard/contract/endpoint-rules';
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { WriteError } from '../../../../components/query-states.tsx';
import { ApiError } from '../../../../lib/api-client.ts';
import { type EndpointInput, EVENT_TYPES, type EventType } from '../../api/endpoints.ts';
import {
  headerProblem,
  headersObject,
  nameProblem,
  rateLimitProblem,
  signalTypesOf,
  signalTypesProblem,
  urlProblem,
} from '../../endpoint-rules.ts';
import { EventFields } from './event-fields.tsx';
import { HeaderFields, type KeyedHeaderRow } from './header-fields.tsx';
import { NameUrlFields } from './name-url-fields.tsx';
import { RateLimitField } from './rate-limit-field.tsx';
import {
  NO_TRANSPORT,
  type TransportCurrent,
  type TransportErrors,
  TransportFields,
  type TransportState,
} from './transport-fields.tsx';

const EMPTY_TRANSPORT: TransportState = {
  auth: 'none',
  username: '',
  password: '',
  tokenUrl: '',
  clientId: '',
  clientSecret: '',
  scope: '',
  audience: '',
  clientCertificate: '',
  clientKey: '',
  removeClientCertificate: false,
  caCertificates: '',
  removeCaCertificates: false,
};

/** What the form knows of an existing endpoint's authentication and TLS (never its secrets). */
export interface TransportInitial {
  current: TransportCurrent;
  fields: Partial<TransportState>;
}

const PEM_CERT = '-----BEGIN CERTIFICATE-----';

/** What is wrong with the section as typed, per field. */
function transportProblems(s: TransportState, current: TransportCurrent): TransportErrors {
  const errors: TransportErrors = {};
  const keeps = current.auth === s.auth;
  if (s.auth === 'basic' && !s.password && !keeps) errors.password = 'Enter the password';
  if (s.auth === 'oauth2_client_credentials') {
    if (!/^https:\/\/[^\s]+$/.test(s.tokenUrl.trim())) errors.tokenUrl = 'Enter the token URL, https://…';
    if (!s.clientId.trim()) errors.clientId = 'Enter the client ID';
    if (!s.clientSecret && !keeps) errors.clientSecret = 'Enter the client secret';
  }
  if (!s.removeClientCertificate) {
    const cert = s.clientCertificate.trim();
    const key = s.clientKey.trim();
    if (cert && !cert.includes(PEM_CERT)) errors.clientCertificate = `Paste the certificate in PEM (${PEM_CERT} …)`;
    if (key && !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key))
      errors.clientKey = 'Paste the unencrypted private key in PEM (-----BEGIN PRIVATE KEY----- …)';
    if (key && !cert) errors.clientCertificate = 'Paste the certificate this key belongs to';
    if (cert && !key && !current.clientCertificate) errors.clientKey = 'Paste the certificate’s private key';
  }
  const ca = s.caCertificates.trim();
  if (!s.removeCaCertificates && ca && !ca.includes(PEM_CERT))
    errors.caCertificates = `Paste the CA certificates in PEM (${PEM_CERT} …)`;
  return errors;
}

/** The request fields the section sets: only what changed; secrets left empty are kept by the server. */
function transportInput(s: TransportState, current: TransportCurrent): Partial<EndpointInput> {
  const out: Partial<EndpointInput> = {};
  if (s.auth === 'none') {
    if (current.auth !== 'none') out.auth = null;
  } else if (s.auth === 'basic') {
    out.auth = { type: 'basic', username: s.username.trim(), ...(s.password ? { password: s.password } : {}) };
  } else {
    out.auth = {
      type: 'oauth2_client_credentials',
      token_url: s.tokenUrl.trim(),
      client_id: s.clientId.trim(),
      ...(s.clientSecret ? { client_secret: s.clientSecret } : {}),
      scope: s.scope.trim() || null,
      audience: s.audience.trim() || null,
    };
  }
  if (s.removeClientCertificate) out.tls_client_certificate = null;
  else if (s.clientCertificate.trim()) {
    out.tls_client_certificate = s.clientCertificate.trim();
    if (s.clientKey.trim()) out.tls_client_key = s.clientKey.trim();
  }
  if (s.removeCaCertificates) out.tls_ca_certificates = null;
  else if (s.caCertificates.trim()) out.tls_ca_certificates = s.caCertificates.trim();
  return out;
}

/** A refusal in the words of the form's labels rather than the API's field names. */
const fieldWords = (message: string) =>
  message
    .replace(/tls_client_key/g, 'the private key')
    .replace(/tls_client_certificate/g, 'the client certificate')
    .replace(/tls_ca_certificates/g, 'the CA bundle')
    .replace(/^./, (c) => c.toUpperCase());

/** The server's refusals that concern one field of the section. */
const TRANSPORT_CODES: Record<string, keyof TransportErrors> = {
  invalid_tls_client_certificate: 'clientCertificate',
  invalid_tls_client_key: 'clientKey',
  invalid_tls_ca_certificates: 'caCertificates',
};

/** A new endpoint's form starts from the server's defaults. */
export const NEW_ENDPOINT_SETTINGS = {
  ...ENDPOINT_DEFAULTS,
  event_types: [...ENDPOINT_DEFAULTS.event_types],
};

export function EndpointForm({
  initial,
  transport: transportInitial,
  submitLabel,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  initial?: EndpointInput;
  /** On edit: the endpoint's authentication and TLS as they are. */
  transport?: TransportInitial;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (input: EndpointInput) => void;
  onCancel: () => void;
}) {
  const headingId = useId();
  const nextKey = useRef(0);
  const [name, setName] = useState(initial?.name ?? '');
  const [url, setUrl] = useState(initial?.url ?? '');
  const [rows, setRows] = useState<KeyedHeaderRow[]>(() =>
    Object.entries(initial?.headers ?? {}).map(([n, v]) => ({ key: nextKey.current++, name: n, value: v })),
  );
  const settings = initial ?? NEW_ENDPOINT_SETTINGS;
  const [events, setEvents] = useState<EventType[]>(settings.event_types);
  const [minSeverity, setMinSeverity] = useState(settings.min_severity);
  const [signalTypes, setSignalTypes] = useState((settings.signal_types ?? []).join(', '));
  const [rate, setRate] = useState(settings.rate_limit === null ? '' : String(settings.rate_limit));
  const current = transportInitial?.current ?? NO_TRANSPORT;
  const [transport, setTransport] = useState<TransportState>({ ...EMPTY_TRANSPORT, ...transportInitial?.fields });
  const [touched, setTouched] = useState({ name: false, url: false, headers: false, transport: false });
  const [sent, setSent] = useState<EndpointInput>();
  // After a refused submit, focus moves to the first field to fix (once it shows its error).
  const formRef = useRef<HTMLFormElement>(null);
  const [refusals, setRefusals] = useState(0);
  useEffect(() => {
    if (refusals > 0) formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [refusals]);

  const problems = {
    name: nameProblem(name),
    url: urlProblem(url),
    headers: rows.map((r, i) => headerProblem(r, rows.slice(0, i))),
    events: events.length === 0 ? 'Choose at least one kind of event' : undefined,
    signalTypes: signalTypesProblem(signalTypes),
    rate: rateLimitProblem(rate),
    transport: transportProblems(transport, current),
  };
  // The server's refusal, shown on the field it concerns until that field changes.
  const server = error instanceof ApiError ? error : undefined;
  const serverUrl =
    server && ['invalid_url', 'blocked_address'].includes(server.code) && sent?.url === url.trim()
      ? server.message
      : undefined;
  const serverHeaders = server?.code === 'invalid_headers' ? server.message : undefined;
  const serverTransportField = server ? TRANSPORT_CODES[server.code] : undefined;
  const transportErrors: TransportErrors = {
    ...(touched.transport ? problems.transport : {}),
    ...(serverTransportField ? { [serverTransportField]: fieldWords(server?.message ?? '') } : {}),
  };
  const otherError = error && !serverUrl && !serverHeaders && !serverTransportField ? error : undefined;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched({ name: true, url: true, headers: true, transport: true });
    if (
      problems.name ||
      problems.url ||
      problems.headers.some((p) => p.name || p.value) ||
      problems.events ||
      problems.signalTypes ||
      problems.rate ||
      Object.keys(problems.transport).length > 0
    ) {
      setRefusals((n) => n + 1);
      return;
    }
    const types = signalTypesOf(signalTypes);
    const input: EndpointInput = {
      name: name.trim(),
      url: url.trim(),
      headers: headersObject(rows),
      // In the order the server lists them.
      event_types: EVENT_TYPES.filter((t) => events.includes(t)),
      min_severity: minSeverity,
      signal_types: types.length > 0 ? types : null,
      rate_limit: rate.trim() === '' ? null : Number(rate),
      ...transportInput(transport, current),
    };
    setSent(input);
    onSubmit(input);
  };

  return (
    <form className="form card" ref={formRef} onSubmit={submit} noValidate aria-labelledby={headingId}>
      <h2 id={headingId} className="visually-hidden">
        Endpoint
      </h2>
      <WriteError error={otherError} />
      <NameUrlFields
        name={name}
        url={url}
        errors={{
          name: touched.name ? problems.name : undefined,
          url: (touched.url ? problems.url : undefined) ?? serverUrl,
        }}
        onName={setName}
        onUrl={setUrl}
        onLeave={(field) => setTouched((t) => ({ ...t, [field]: true }))}
      />
      <HeaderFields
        rows={rows}
        problems={touched.headers ? problems.headers : []}
        serverError={serverHeaders}
        onEdit={(next) => setRows((rs) => rs.map((r) => (r.key === next.key ? next : r)))}
        onRemove={(key) => setRows((rs) => rs.filter((r) => r.key !== key))}
        onAdd={() => setRows((rs) => [...rs, { key: nextKey.current++, name: '', value: '' }])}
      />
      <EventFields
        events={events}
        minSeverity={minSeverity}
        signalTypes={signalTypes}
        errors={{ events: problems.events, signalTypes: problems.signalTypes }}
        onEvent={(type, chosen) => setEvents((es) => (chosen ? [...es, type] : es.filter((x) => x !== type)))}
        onMinSeverity={setMinSeverity}
        onSignalTypes={setSignalTypes}
      />
      <RateLimitField value={rate} error={problems.rate} onChange={setRate} />
      <TransportFields
        state={transport}
        current={current}
        errors={transportErrors}
        onChange={(patch) => setTransport((t) => ({ ...t, ...patch }))}
      />
      <div className="actions">
        <button type="submit" className="button primary" disabled={pending}>
          {submitLabel}
        </button>
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
