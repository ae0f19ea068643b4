import { TextField } from '../../../../components/text-field.tsx';
import { HEADERS_MAX_COUNT, type HeaderRow } from '../../endpoint-rules.ts';

/** A header row of the form; `key` keeps a row's fields while rows above it are removed. */
export interface KeyedHeaderRow extends HeaderRow {
  key: number;
}

function HeaderRowFields({
  row,
  index,
  problem,
  onChange,
  onRemove,
}: {
  row: KeyedHeaderRow;
  index: number;
  problem: { name?: string; value?: string };
  onChange: (row: KeyedHeaderRow) => void;
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

/** Custom headers: a row each, added and removed here; `serverError` is the server's refusal of them. */
export function HeaderFields({
  rows,
  problems,
  serverError,
  onEdit,
  onRemove,
  onAdd,
}: {
  rows: readonly KeyedHeaderRow[];
  /** One per row, in order; empty objects until the rows are checked. */
  problems: readonly { name?: string; value?: string }[];
  serverError: string | undefined;
  onEdit: (row: KeyedHeaderRow) => void;
  onRemove: (key: number) => void;
  onAdd: () => void;
}) {
  return (
    <fieldset>
      <legend>Custom headers</legend>
      <p className="hint">
        Sent with every delivery, e.g. an Authorization header your receiver checks. Guard sets Content-Type, User-Agent
        the Guard-* headers and the Standard Webhooks webhook-* headers itself.
      </p>
      {serverError && (
        <p className="error" role="alert">
          {serverError}
        </p>
      )}
      {rows.map((row, i) => (
        <HeaderRowFields
          key={row.key}
          row={row}
          index={i}
          problem={problems[i] ?? {}}
          onChange={onEdit}
          onRemove={() => onRemove(row.key)}
        />
      ))}
      <button type="button" className="button small" disabled={rows.length >= HEADERS_MAX_COUNT} onClick={onAdd}>
        Add header
      </button>
    </fieldset>
  );
}
