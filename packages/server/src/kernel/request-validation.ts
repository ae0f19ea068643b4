// How request parts are validated, with Fastify's own Ajv compiler (@fastify/ajv-compiler:
// Ajv 8 with ajv-formats, the module Fastify builds its default validator from). Request
// bodies are JSON and validated strictly ("3" is not a severity); query strings and path
// parameters arrive as text, so only they are coerced to the schema's types. Unknown
// properties are refused by the schemas, never silently removed.

import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { badRequest } from './errors.ts';

const AJV_OPTIONS = { removeAdditional: false, useDefaults: true, allErrors: false, strict: false } as const;

export function requestValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const fromPool = AjvCompiler();
  // The pool's functions take the route definition ({schema, httpPart, ...}) as Fastify passes
  // it to any validator compiler; their d.ts declares Ajv's compile(schema) instead.
  const strict = fromPool(
    {},
    { customOptions: { ...AJV_OPTIONS, coerceTypes: false } },
  ) as FastifySchemaCompiler<unknown>;
  const coercing = fromPool(
    {},
    { customOptions: { ...AJV_OPTIONS, coerceTypes: 'array' } },
  ) as FastifySchemaCompiler<unknown>;
  return (route) => (route.httpPart === 'body' ? strict : coercing)(route);
}

/**
 * Text with a NUL character (U+0000) is refused in every JSON body, query string and path
 * parameter with 400 invalid_request: PostgreSQL cannot store it in text at all, and the
 * same request must get the same answer on both engines (SQLite would store it).
 */
export function refuseNulCharacters(app: FastifyInstance): void {
  app.addHook('preValidation', async (req) => {
    if (hasNul(req.params) || hasNul(req.query) || hasNul(req.body))
      throw badRequest('text may not contain the NUL character (U+0000)');
  });
}

/** Whether a string anywhere in a parsed JSON value (plain objects and arrays only) holds U+0000. */
function hasNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (typeof value !== 'object' || value === null || depth > 64) return false;
  if (Array.isArray(value)) return value.some((v) => hasNul(v, depth + 1));
  if (!isPlainRecord(value)) return false; // a stream, a Buffer: not JSON
  for (const [k, v] of Object.entries(value)) if (k.includes('\u0000') || hasNul(v, depth + 1)) return true;
  return false;
}

/**
 * A plain object: JSON.parse's (Object.prototype), or a query string's or path's parameters,
 * which Fastify's parsers build on a prototype that itself has none (fast-querystring's
 * `new Empty()`). A stream or a Buffer is neither.
 */
function isPlainRecord(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null;
}
