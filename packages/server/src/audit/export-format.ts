// The audit log as a download (GET /v1/audit/export): CSV (RFC 4180) or JSON Lines. Pure
// formatting of one entry at a time, so the route streams a log of any length.
//
// CSV cells are quoted when they hold a comma, a double quote, CR or LF (quotes doubled), and a
// cell that a spreadsheet would read as a formula (starting with = + - @, a tab or CR) is
// prefixed with a single quote: an audit target or an email is written by users, and opening
// the export must never run what they wrote (OWASP, "CSV injection").

/** The columns of an export, in order: the CSV header row and each JSON line's keys. */
export const EXPORT_COLUMNS = [
  'id',
  'at',
  'actor_id',
  'actor_email',
  'actor_role',
  'tenant_id',
  'action',
  'target',
] as const;

export type ExportEntry = Record<(typeof EXPORT_COLUMNS)[number], string | null>;

export type ExportFormat = 'csv' | 'jsonl';

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV cell: formula-neutralised, then quoted per RFC 4180 when needed; null is empty. */
export function csvCell(value: string | null): string {
  if (value === null) return '';
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One CSV record, CRLF-terminated (RFC 4180). */
export function csvRecord(values: readonly (string | null)[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

export function csvHeader(): string {
  return csvRecord(EXPORT_COLUMNS);
}

/** One line of the export in `format`. */
export function exportLine(format: ExportFormat, entry: ExportEntry): string {
  if (format === 'jsonl') return `${JSON.stringify(entry)}\n`;
  return csvRecord(EXPORT_COLUMNS.map((c) => entry[c]));
}

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/jsonl; charset=utf-8',
};

/** `guard-audit-<tenant or all>-<YYYY-MM-DD>.<format>`: a dated name a SIEM import or an auditor can file. */
export function exportFilename(format: ExportFormat, tenantId: string | null, at: Date): string {
  const who = tenantId === null ? 'all-tenants' : tenantId.replace(/[^A-Za-z0-9_-]/g, '_');
  return `guard-audit-${who}-${at.toISOString().slice(0, 10)}.${format}`;
}
