// Add Endpoint and edit: Name, URL (https:// checked as you leave the field and on submit),
// custom header rows, the events it receives (with a minimum severity and signal types for
// signals) and an optional rate limit. Nothing is sent while a field is wrong; the server's
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

/** A new endpoint's form starts from the server's defaults. */
export const NEW_ENDPOINT_SETTINGS = {
  ...ENDPOINT_DEFAULTS,
  event_types: [...ENDPOINT_DEFAULTS.event_types],
};

export function EndpointForm({
  initial,
  submitLabel,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  initial?: EndpointInput;
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
  const [touched, setTouched] = useState({ name: false, url: false, headers: false });
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
  };
  // The server's refusal, shown on the field it concerns until that field changes.
  const server = error instanceof ApiError ? error : undefined;
  const serverUrl =
    server && ['invalid_url', 'blocked_address'].includes(server.code) && sent?.url === url.trim()
      ? server.message
      : undefined;
  const serverHeaders = server?.code === 'invalid_headers' ? server.message : undefined;
  const otherError = error && !serverUrl && !serverHeaders ? error : undefined;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched({ name: true, url: true, headers: true });
    if (
      problems.name ||
      problems.url ||
      problems.headers.some((p) => p.name || p.value) ||
      problems.events ||
      problems.signalTypes ||
      problems.rate
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
