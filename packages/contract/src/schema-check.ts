// Checking untrusted JSON (a service's answer, a manifest read from an archive) against a
// contract schema, with TypeBox's JSON Schema checker. 'typebox/schema' is TypeBox's lightest
// entry point that checks: loading it costs the agent's upload ~5 MiB of RSS, against ~10 MiB
// for 'typebox' and ~14 MiB for 'typebox/compile' (docs/decisions/0005-contract-schemas.md).
// Programs load this module only where they parse such a value.

import { Check, Errors } from 'typebox/schema';

/** A path into a JSON value: property names, and indexes into arrays. */
export type FieldPath = (string | number)[];

export interface SchemaFault {
  /** The offending field; a missing required property is named by its own path. */
  path: FieldPath;
  /** TypeBox's words for what is wrong ("must be string"), for fields without a message of their own. */
  message: string;
}

/** Any JSON Schema object (the contract's are `as const` literals). */
export type JsonSchema = { readonly [keyword: string]: unknown };

/**
 * undefined when `value` satisfies `schema`; else where it first breaks it, in the order the
 * schema declares its properties.
 */
export function firstFault(schema: JsonSchema, value: unknown): SchemaFault | undefined {
  if (Check(schema, value)) return undefined;
  const [, errors] = Errors(schema, value);
  const error = errors[0];
  if (error === undefined) return { path: [], message: 'does not match its schema' };
  const path = pointerPath(error.instancePath, value);
  if (error.keyword === 'required') {
    const missing = (error.params as { requiredProperties?: string[] }).requiredProperties?.[0];
    if (missing !== undefined) path.push(missing);
  }
  return { path, message: error.message };
}

/** `contents[0].name`, `redaction.extra_keys`; '' for the whole value. */
export function fieldName(path: FieldPath): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/**
 * A fresh copy of a value that satisfies `schema`, holding only what the schema declares:
 * properties it does not name are dropped at every depth (the keys of a map, whose schema names
 * none, are all kept), so nothing of unbounded shape travels on from an untrusted document.
 */
export function copyDeclared<T>(schema: JsonSchema, value: T): T {
  return copy(schema, value) as T;
}

function copy(schema: JsonSchema, value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = schema.items as JsonSchema | undefined;
    return value.map((v) => (items ? copy(items, v) : v));
  }
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties) {
    const out: Record<string, unknown> = {};
    for (const [key, sub] of Object.entries(properties))
      if (Object.hasOwn(record, key) && record[key] !== undefined) out[key] = copy(sub, record[key]);
    return out;
  }
  // A map: additionalProperties or patternProperties give the schema of every value.
  const each = (schema.additionalProperties ?? Object.values(schema.patternProperties ?? {})[0]) as
    | JsonSchema
    | undefined;
  return Object.fromEntries(
    Object.entries(record).map(([k, v]) => [k, typeof each === 'object' && each !== null ? copy(each, v) : v]),
  );
}

/** JSON Pointer (RFC 6901) → path; a segment into an array becomes its index. */
function pointerPath(pointer: string, root: unknown): FieldPath {
  if (pointer === '') return [];
  const path: FieldPath = [];
  let at: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    const key = Array.isArray(at) ? Number(segment) : segment;
    path.push(key);
    at = typeof at === 'object' && at !== null ? (at as Record<string | number, unknown>)[key] : undefined;
  }
  return path;
}
