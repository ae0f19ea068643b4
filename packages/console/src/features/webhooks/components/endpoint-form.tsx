// Add Endpoint and edit: Name, URL (https:// checked as you leave the field and on submit),
// custom header rows. Nothing is sent while a field is wrong; the server's own refusal of a
// URL or header is shown on that field too.

import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { WriteError } from '../../../components/query-states.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import type { EndpointInput } from '../api/endpoints.ts';
import {
  HEADERS_MAX_COUNT,
  type HeaderRow,
  headerProblem,
  headersObject,
  NAME_MAX_LENGTH,
  nameProblem,
  urlProblem,
} from '../endpoint-rules.ts';

interface Row extends HeaderRow {
  key: number;
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
    if (problems.name || problems.url || problems.headers.some((p) => p.name || p.value)) {
      setRefusals((n) => n + 1);
      return;
    }
    const input = { name: name.trim(), url: url.trim(), headers: headersObject(rows) };
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
