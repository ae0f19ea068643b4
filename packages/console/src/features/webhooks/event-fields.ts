// The rows of an event's field table, read from its JSON Schema (@guard/contract/webhook-events):
// one per property, nested objects flattened (`data.signal_id`), each with its type in words
// and whether it is always present. Pure.

export interface EventField {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

interface Schema {
  readonly type?: string;
  readonly const?: unknown;
  readonly enum?: readonly unknown[];
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly description?: string;
  readonly required?: readonly string[];
  readonly properties?: { readonly [name: string]: Schema };
}

export function typeText(s: Schema): string {
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const base = s.type ?? 'any';
  if (s.format) return `${base} (${s.format})`;
  if (s.minimum !== undefined && s.maximum !== undefined) return `${base}, ${s.minimum} to ${s.maximum}`;
  return base;
}

export function eventFields(schema: Schema, prefix = ''): EventField[] {
  const rows: EventField[] = [];
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    rows.push({
      name: path,
      type: typeText(s),
      required: schema.required?.includes(name) ?? false,
      description: s.description ?? '',
    });
    if (s.type === 'object' && s.properties) rows.push(...eventFields(s, `${path}.`));
  }
  return rows;
}
