// Add Endpoint and edit: Name, URL (https:// checked as you leave the field and on submit),
// custom header rows, the events it receives (with a minimum severity and signal types for
// signals) and an optional rate limit. Nothing is sent while a field is wrong; the server's
// own refusal of a URL or header is shown on that field too.

import { ENDPOINT_DEFAULTS, isSignalType, SIGNAL_TYPES_MAX_COUNT } from '@guard/contract/endpoint-rules';
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { WriteError } from '../../../components/query-states.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { type EndpointInput, EVENT_TYPES, type EventType } from '../api/endpoints.ts';
import {
  HEADERS_MAX_COUNT,
  type HeaderRow,
  headerProblem,
  headersObject,
  NAME_MAX_LENGTH,
  nameProblem,
  rateLimitProblem,
  urlProblem,
} from '../endpoint-rules.ts';

interface Row extends HeaderRow {
  key: number;
}

const EVENT_LABELS: Record<EventType, { label: string; hint: string }> = {
  signal_created: { label: 'Signals', hint: 'every new security signal that passes the filters below' },
  test: { label: 'Test events', hint: 'what Send test event sends' },
  'endpoint.failing': {
    label: 'Endpoint failing',
    hint: 'another endpoint of yours has failed for 50 %, 75 % and 90 % of the time before Guard disables it',
  },
  'endpoint.disabled': { label: 'Endpoint disabled', hint: 'Guard disabled another endpoint of yours' },
};
const SEVERITIES = [
  [1, '1 (info): every signal'],
  [2, '2 and above'],
  [3, '3 and above'],
  [4, '4 and above'],
  [5, '5 (critical) only'],
] as const;
/** A new endpoint's form starts from the server's defaults. */
export const NEW_ENDPOINT_SETTINGS = {
  ...ENDPOINT_DEFAULTS,
  event_types: [...ENDPOINT_DEFAULTS.event_types],
};

function signalTypesOf(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}

function signalTypesProblem(text: string): string | undefined {
  const types = signalTypesOf(text);
  const bad = types.find((t) => !isSignalType(t));
  if (bad) return `“${bad}” is not a signal type: lowercase letters, digits, “_”, “.” and “-”`;
  if (types.length > SIGNAL_TYPES_MAX_COUNT) return `At most ${SIGNAL_TYPES_MAX_COUNT} signal types`;
  return undefined;
}

function HeaderRowFields({
  row,
  index,
  problem,
  onChange,
  onRemove,
}: {
  row: Row;
  index: number;
  problem: { name?: string; value?: string };
  onChange: (row: Row) => void;
  onRemove: () => void;
}) {
  return (
    <fieldset className="header-row-set">
      <legend className="visually-hidden">Header {index + 1}</legend>
      <div className="header-row">
        <TextField
          label="Header name"
          value={row.name}
          placeholder="Authorization"
          autoComplete="off"
          spellCheck={false}
          error={problem.name}
          onChange={(e) => onChange({ ...row, name: e.target.value })}
        />
        <TextField
          label="Header value"
          value={row.value}
          autoComplete="off"
          spellCheck={false}
          error={problem.value}
          onChange={(e) => onChange({ ...row, value: e.target.value })}
        />
        <button type="button" className="button small" onClick={onRemove} aria-label={`Remove header ${index + 1}`}>
          Remove
        </button>
      </div>
    </fieldset>
  );
}

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
  const [rows, setRows] = useState<Row[]>(() =>
    Object.entries(initial?.headers ?? {}).map(([n, v]) => ({ key: nextKey.current++, name: n, value: v })),
  );
  const settings = initial ?? NEW_ENDPOINT_SETTINGS;
  const [events, setEvents] = useState<EventType[]>(settings.event_types);
  const [minSeverity, setMinSeverity] = useState(settings.min_severity);
  const [signalTypes, setSignalTypes] = useState((settings.signal_types ?? []).join(', '));
  const [rate, setRate] = useState(settings.rate_limit === null ? '' : String(settings.rate_limit));
  const severityId = useId();
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
      <TextField
        label="Name"
        value={name}
        maxLength={NAME_MAX_LENGTH}
        autoComplete="off"
        hint="Shown in this console only, e.g. “SIEM ingest”."
        messageLines={2}
        error={touched.name ? problems.name : undefined}
        onChange={(e) => setName(e.target.value)}
        onBlur={() => setTouched((t) => ({ ...t, name: true }))}
      />
      <TextField
        label="URL"
        type="url"
        inputMode="url"
        value={url}
        autoComplete="off"
        spellCheck={false}
        placeholder="https://hooks.example.com/guard"
        hint="Where Guard POSTs each signal. https:// only."
        messageLines={2}
        error={(touched.url ? problems.url : undefined) ?? serverUrl}
        onChange={(e) => setUrl(e.target.value)}
        onBlur={() => setTouched((t) => ({ ...t, url: true }))}
      />
      <fieldset>
        <legend>Custom headers</legend>
        <p className="hint">
          Sent with every delivery, e.g. an Authorization header your receiver checks. Guard sets Content-Type,
          User-Agent and the Guard-* headers itself.
        </p>
        {serverHeaders && (
          <p className="error" role="alert">
            {serverHeaders}
          </p>
        )}
        {rows.map((row, i) => (
          <HeaderRowFields
            key={row.key}
            row={row}
            index={i}
            problem={touched.headers ? problems.headers[i] : {}}
            onChange={(next) => setRows((rs) => rs.map((r) => (r.key === row.key ? next : r)))}
            onRemove={() => setRows((rs) => rs.filter((r) => r.key !== row.key))}
          />
        ))}
        <button
          type="button"
          className="button small"
          disabled={rows.length >= HEADERS_MAX_COUNT}
          onClick={() => setRows((rs) => [...rs, { key: nextKey.current++, name: '', value: '' }])}
        >
          Add header
        </button>
      </fieldset>
      <fieldset aria-describedby={problems.events ? `${severityId}-events-error` : undefined}>
        <legend>Events</legend>
        <p className="hint">What Guard sends to this endpoint.</p>
        {EVENT_TYPES.map((t) => (
          <div key={t} className="check-row">
            <label className="checkbox">
              <input
                type="checkbox"
                checked={events.includes(t)}
                aria-invalid={problems.events ? true : undefined}
                onChange={(e) => setEvents((es) => (e.target.checked ? [...es, t] : es.filter((x) => x !== t)))}
              />
              {EVENT_LABELS[t].label}
            </label>
            <span className="hint">
              {' '}
              <code>{t}</code>: {EVENT_LABELS[t].hint}
            </span>
          </div>
        ))}
        {problems.events && (
          <p className="error" id={`${severityId}-events-error`}>
            {problems.events}
          </p>
        )}
        <div className="field">
          <label htmlFor={severityId}>Minimum severity</label>
          <select id={severityId} value={minSeverity} onChange={(e) => setMinSeverity(Number(e.target.value))}>
            {SEVERITIES.map(([n, label]) => (
              <option key={n} value={n}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <TextField
          label="Signal types"
          value={signalTypes}
          autoComplete="off"
          spellCheck={false}
          placeholder="sudo_command_executed, ssh_login"
          hint="Only signals of these types, separated by commas. Empty: every type."
          messageLines={2}
          error={problems.signalTypes}
          onChange={(e) => setSignalTypes(e.target.value)}
        />
      </fieldset>
      <TextField
        label="Rate limit (deliveries per second)"
        value={rate}
        inputMode="decimal"
        autoComplete="off"
        placeholder="no limit"
        hint="Deliveries beyond it wait their turn; none fails because of it. Empty: no limit."
        messageLines={2}
        error={problems.rate}
        onChange={(e) => setRate(e.target.value)}
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
